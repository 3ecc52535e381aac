// Package supervisor starts plugin processes over go-plugin, keeps them
// alive (restarting a crashed plugin with backoff), and gives the host a
// handle to call them.
package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/protocol"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// Spec says how to start one plugin.
type Spec struct {
	// Name is the name the host knows the plugin by: the built-in area, the
	// config-file key, or the part after cairn-plugin- in a file name.
	Name string
	// Source is "builtin", "config" or "dir".
	Source string
	Path   string
	Args   []string
	// Env holds extra KEY=VALUE entries.
	Env []string
	// SHA256 pins the executable's content when non-empty.
	SHA256   string
	Settings map[string]string
	// Required plugins stop the host when they cannot start.
	Required bool
}

// Fingerprint identifies everything about a spec that requires a restart
// when it changes, including the executable's current content.
func (s Spec) Fingerprint() string {
	h := sha256.New()
	sum, _ := fileSHA256(s.Path)
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{s.Source, s.Path, s.Args, s.Env, s.SHA256, s.Settings, s.Required, sum})
	return hex.EncodeToString(h.Sum(nil))
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// State of a plugin.
type State string

// Plugin states.
const (
	StateStarting   State = "starting"
	StateRunning    State = "running"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
)

// Env is what every plugin is started with.
type Env struct {
	Root, DataDir, Mode, HostVersion string
	// ExtraEnv is added to every plugin's environment (CAIRN_* settings).
	ExtraEnv []string
	Logger   hclog.Logger
	Bus      *events.Bus
	// StartTimeout bounds handshake + Configure + Describe.
	StartTimeout time.Duration
}

// Hooks let the host react to lifecycle changes.
type Hooks struct {
	// Restarted runs after a crashed plugin is back and described. The
	// first start is reported by Start's return instead.
	Restarted func(p *Plugin)
	// Down runs when a running plugin's process ends unexpectedly.
	Down func(p *Plugin, err error)
	// Failed runs when a plugin gives up restarting.
	Failed func(p *Plugin, err error)
}

// Restart policy: exponential backoff from 100 ms doubling to 5 s; a plugin
// that crashes more than MaxRestarts times within RestartWindow is failed.
const (
	MaxRestarts   = 5
	RestartWindow = time.Minute
)

// Plugin is a supervised plugin process.
type Plugin struct {
	spec  Spec
	env   Env
	hooks Hooks
	log   hclog.Logger

	mu        sync.Mutex
	state     State
	client    *plugin.Client
	rpc       *protocol.ClientV1
	runner    *procRunner
	desc      *pb.DescribeResponse
	ready     chan struct{}
	lastErr   string
	restarts  int
	crashes   []time.Time
	stopping  bool
	startedAt time.Time
	unsubs    []func()
}

// Start launches the plugin and waits until it is configured and described.
// On failure the returned error says why, and the Plugin is in StateFailed.
func Start(ctx context.Context, spec Spec, env Env, hooks Hooks) (*Plugin, error) {
	if env.StartTimeout == 0 {
		env.StartTimeout = 30 * time.Second
	}
	p := &Plugin{spec: spec, env: env, hooks: hooks, log: env.Logger.Named(spec.Name), state: StateStarting, ready: make(chan struct{})}
	if err := p.launch(ctx, false); err != nil {
		p.setFailed(err)
		return p, err
	}
	return p, nil
}

// Spec returns the plugin's spec.
func (p *Plugin) Spec() Spec { return p.spec }

// Name returns the host's name for the plugin.
func (p *Plugin) Name() string { return p.spec.Name }

// Describe returns the latest description (nil before the first start).
func (p *Plugin) Describe() *pb.DescribeResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.desc
}

// Status is a snapshot for health and the CLI.
type Status struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Source    string `json:"source"`
	Path      string `json:"path"`
	State     State  `json:"state"`
	PID       int    `json:"pid,omitempty"`
	Protocol  int    `json:"protocol"`
	Restarts  int    `json:"restarts"`
	Tools     int    `json:"tools"`
	LastError string `json:"last_error,omitempty"`
}

// Status returns a snapshot of the plugin.
func (p *Plugin) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Name: p.spec.Name, Source: p.spec.Source, Path: p.spec.Path, State: p.state, Restarts: p.restarts, LastError: p.lastErr}
	if p.desc != nil {
		st.Version = p.desc.Version
		st.Tools = len(p.desc.Tools)
		st.Protocol = int(p.desc.ProtocolVersion)
	}
	if p.runner != nil && p.state == StateRunning {
		st.PID = p.runner.pid
	}
	return st
}

// PID returns the current process id (0 when not running).
func (p *Plugin) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runner == nil {
		return 0
	}
	return p.runner.pid
}

func (p *Plugin) launch(ctx context.Context, restart bool) error {
	if p.spec.SHA256 != "" {
		sum, err := fileSHA256(p.spec.Path)
		if err != nil {
			return fmt.Errorf("plugin %s: read %s to check its sha256 pin: %w", p.spec.Name, p.spec.Path, err)
		}
		if sum != p.spec.SHA256 {
			return fmt.Errorf("plugin %s: %s has sha256 %s but the config pins %s; refusing to start it (update the pin if the new binary is intended)", p.spec.Name, p.spec.Path, sum, p.spec.SHA256)
		}
	}
	var r *procRunner
	hostSvc := &hostServices{plugin: p.spec.Name, bus: p.env.Bus, log: p.log}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{1: {protocol.PluginKey: &protocol.GRPCPluginV1{Host: hostSvc}}},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
			var err error
			// cmd carries go-plugin's environment (cookie, protocol
			// versions, socket dir) on top of os.Environ.
			env := append(cmd.Env, p.env.ExtraEnv...)
			env = append(env, p.spec.Env...)
			r, err = newProcRunner(p.log, p.spec.Path, p.spec.Args, env)
			return r, err
		},
		Logger:          p.log,
		GRPCDialOptions: protocol.DialOptions(),
		StartTimeout:    p.env.StartTimeout,
		SyncStdout:      p.log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}),
		SyncStderr:      p.log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}),
	})
	fail := func(err error) error {
		client.Kill()
		return err
	}
	rpcClient, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("plugin %s (%s) failed its handshake: %w", p.spec.Name, p.spec.Path, err))
	}
	raw, err := rpcClient.Dispense(protocol.PluginKey)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", p.spec.Name, err))
	}
	rpc, ok := raw.(*protocol.ClientV1)
	if !ok {
		return fail(fmt.Errorf("plugin %s: unexpected protocol client %T", p.spec.Name, raw))
	}
	cctx, cancel := context.WithTimeout(ctx, p.env.StartTimeout)
	defer cancel()
	if _, err := rpc.Configure(cctx, &pb.ConfigureRequest{
		HostServiceId: rpc.HostServiceID, Root: p.env.Root, DataDir: p.env.DataDir,
		Mode: p.env.Mode, HostVersion: p.env.HostVersion, Settings: p.spec.Settings,
	}); err != nil {
		return fail(fmt.Errorf("plugin %s could not start: %s", p.spec.Name, grpcMessage(err)))
	}
	desc, err := rpc.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		return fail(fmt.Errorf("plugin %s: describe: %s", p.spec.Name, grpcMessage(err)))
	}
	if desc.Name != p.spec.Name {
		p.log.Warn("plugin describes itself under another name; the host uses its own", "declared", desc.Name, "name", p.spec.Name)
	}

	p.mu.Lock()
	p.client, p.rpc, p.runner, p.desc = client, rpc, r, desc
	p.state = StateRunning
	p.startedAt = time.Now()
	p.lastErr = ""
	close(p.ready)
	p.mu.Unlock()

	p.subscribe(desc.Subscriptions)
	go p.watch(r)
	if restart && p.hooks.Restarted != nil {
		p.hooks.Restarted(p)
	}
	p.log.Info("plugin ready", "version", desc.Version, "tools", len(desc.Tools), "pid", r.pid, "protocol", client.NegotiatedVersion())
	return nil
}

func grpcMessage(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}

// watch waits for the process to end and restarts it unless the host is
// stopping it.
func (p *Plugin) watch(r *procRunner) {
	<-r.exited
	p.mu.Lock()
	if p.stopping || p.runner != r {
		p.mu.Unlock()
		return
	}
	p.state = StateRestarting
	p.ready = make(chan struct{})
	p.lastErr = "plugin process exited unexpectedly"
	now := time.Now()
	var recent []time.Time
	for _, t := range p.crashes {
		if now.Sub(t) < RestartWindow {
			recent = append(recent, t)
		}
	}
	p.crashes = append(recent, now)
	crashes := len(p.crashes)
	client := p.client
	p.mu.Unlock()

	client.Kill() // reap go-plugin's goroutines and socket dir
	err := errors.New("plugin process exited unexpectedly")
	p.log.Error("plugin crashed; restarting", "crashes_last_minute", crashes)
	if p.hooks.Down != nil {
		p.hooks.Down(p, err)
	}
	if crashes > MaxRestarts {
		p.setFailed(fmt.Errorf("plugin %s crashed %d times within %s; not restarting it (check its log lines above, then run `cairn plugins`)", p.spec.Name, crashes, RestartWindow))
		return
	}
	delay := 100 * time.Millisecond << (crashes - 1)
	if delay > 5*time.Second {
		delay = 5 * time.Second
	}
	for attempt := 0; ; attempt++ {
		time.Sleep(delay)
		p.mu.Lock()
		stopping := p.stopping
		p.mu.Unlock()
		if stopping {
			return
		}
		err := p.launch(context.Background(), true)
		if err == nil {
			p.mu.Lock()
			p.restarts++
			p.mu.Unlock()
			return
		}
		p.log.Error("plugin restart failed", "error", err, "attempt", attempt+1)
		if attempt+1 >= MaxRestarts {
			p.setFailed(err)
			return
		}
		delay *= 2
		if delay > 5*time.Second {
			delay = 5 * time.Second
		}
	}
}

func (p *Plugin) setFailed(err error) {
	p.mu.Lock()
	p.state = StateFailed
	p.lastErr = err.Error()
	// Wake waiters so calls fail fast instead of waiting out their deadline.
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
	p.mu.Unlock()
	if p.hooks.Failed != nil {
		p.hooks.Failed(p, err)
	}
}

// await returns the RPC client once the plugin is running. It waits through
// a restart, up to ctx's deadline or 30 seconds.
func (p *Plugin) await(ctx context.Context) (*protocol.ClientV1, error) {
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	for {
		p.mu.Lock()
		state, rpc, ready, lastErr := p.state, p.rpc, p.ready, p.lastErr
		p.mu.Unlock()
		switch state {
		case StateRunning:
			return rpc, nil
		case StateFailed, StateStopped:
			return nil, errs.Newf(503, errs.PluginUnavailable, "plugin %s is %s: %s", p.spec.Name, state, lastErr)
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, errs.Newf(503, errs.PluginUnavailable, "plugin %s is restarting; try again shortly", p.spec.Name)
		case <-timer.C:
			return nil, errs.Newf(503, errs.PluginUnavailable, "plugin %s did not come back within 30s: %s", p.spec.Name, lastErr)
		}
	}
}

// CallTool runs a tool on the plugin, streaming progress to onProgress.
//
// When the plugin dies under a call, a retrySafe call (read-only or
// idempotent tool) is sent again once the plugin is back; any other call
// fails with ERR_PLUGIN_UNAVAILABLE, because it may have taken effect.
func (p *Plugin) CallTool(ctx context.Context, req *pb.CallToolRequest, onProgress func(*pb.Progress), retrySafe bool) (*pb.ToolResult, error) {
	res, runner, err := p.callOnce(ctx, req, onProgress)
	if err == nil || !retrySafe || !connectionLost(err) || ctx.Err() != nil {
		if err != nil {
			return nil, p.callError(ctx, err)
		}
		return res, nil
	}
	// Give the watcher a moment to notice the exit, then wait for the
	// restart inside await.
	if runner != nil {
		select {
		case <-runner.exited:
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
		// The watcher marks the plugin restarting just after the exit;
		// until it has, await would hand back the dead connection.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
			p.mu.Lock()
			stale := p.runner == runner && p.state == StateRunning
			p.mu.Unlock()
			if !stale {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	p.log.Info("plugin went away during a retry-safe call; retrying after restart", "tool", req.Tool)
	res, _, err = p.callOnce(ctx, req, onProgress)
	if err != nil {
		return nil, p.callError(ctx, err)
	}
	return res, nil
}

func (p *Plugin) callOnce(ctx context.Context, req *pb.CallToolRequest, onProgress func(*pb.Progress)) (*pb.ToolResult, *procRunner, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	r := p.runner
	p.mu.Unlock()
	stream, err := rpc.CallTool(ctx, req)
	if err != nil {
		return nil, r, err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, r, errs.Newf(502, errs.PluginUnavailable, "plugin %s ended the call without a result", p.spec.Name)
			}
			return nil, r, err
		}
		switch e := ev.Event.(type) {
		case *pb.CallToolEvent_Progress:
			if onProgress != nil {
				onProgress(e.Progress)
			}
		case *pb.CallToolEvent_Result:
			return e.Result, r, nil
		}
	}
}

// connectionLost reports whether err means the plugin's connection went
// away (the process died, or the host closed the connection after seeing it
// die) rather than the call failing.
func connectionLost(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return true
	}
	return false
}

func (p *Plugin) callError(ctx context.Context, err error) error {
	if _, typed := errs.As(err); typed {
		return err
	}
	if ctx.Err() != nil {
		return errs.New(499, errs.Cancelled, "the call was cancelled: "+ctx.Err().Error())
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded:
		return errs.New(504, errs.Cancelled, "the call ran past its deadline")
	case codes.Unavailable, codes.Canceled:
		return errs.Newf(503, errs.PluginUnavailable, "plugin %s stopped during the call; it is being restarted, so retry the call", p.spec.Name)
	}
	return errs.Newf(502, errs.PluginUnavailable, "plugin %s: %s", p.spec.Name, grpcMessage(err))
}

// ListResources asks the plugin for its resources.
func (p *Plugin) ListResources(ctx context.Context) (*pb.ListResourcesResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	return rpc.ListResources(ctx, &pb.ListResourcesRequest{})
}

// ReadResource reads one resource from the plugin.
func (p *Plugin) ReadResource(ctx context.Context, uri string) (*pb.ReadResourceResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := rpc.ReadResource(ctx, &pb.ReadResourceRequest{Uri: uri})
	if err != nil {
		return nil, p.callError(ctx, err)
	}
	return resp, nil
}

// Health asks the plugin for its health, within a short deadline.
func (p *Plugin) Health(ctx context.Context) (*pb.HealthResponse, error) {
	p.mu.Lock()
	state, rpc := p.state, p.rpc
	p.mu.Unlock()
	if state != StateRunning {
		return nil, fmt.Errorf("plugin %s is %s", p.spec.Name, state)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return rpc.Health(ctx, &pb.HealthRequest{})
}

// subscribe (re)creates the plugin's bus subscriptions.
func (p *Plugin) subscribe(patterns []string) {
	p.mu.Lock()
	old := p.unsubs
	p.unsubs = nil
	p.mu.Unlock()
	for _, u := range old {
		u()
	}
	if p.env.Bus == nil {
		return
	}
	var unsubs []func()
	for _, pat := range patterns {
		unsubs = append(unsubs, p.env.Bus.Subscribe(p.spec.Name, pat, p.deliver))
	}
	p.mu.Lock()
	p.unsubs = unsubs
	p.mu.Unlock()
}

func (p *Plugin) deliver(ev events.Event) {
	if ev.Source == p.spec.Name {
		return // a plugin does not hear its own events
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rpc, err := p.await(ctx)
	if err != nil {
		p.log.Warn("event not delivered", "event", ev.Type, "id", ev.ID, "error", err)
		return
	}
	_, err = rpc.HandleEvent(ctx, &pb.HandleEventRequest{Event: &pb.Event{Id: ev.ID, Type: ev.Type, Source: ev.Source, Time: ev.Time, Data: ev.Data}})
	if err != nil {
		p.log.Warn("plugin failed to handle event", "event", ev.Type, "id", ev.ID, "error", grpcMessage(err))
	}
}

// Stop asks the plugin to release its resources, then ends the process.
func (p *Plugin) Stop(ctx context.Context) {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return
	}
	p.stopping = true
	client, rpc, state, unsubs := p.client, p.rpc, p.state, p.unsubs
	p.unsubs = nil
	p.mu.Unlock()
	for _, u := range unsubs {
		u()
	}
	if state == StateRunning && rpc != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := rpc.Stop(sctx, &pb.StopRequest{}); err != nil {
			p.log.Warn("plugin stop hook failed", "error", grpcMessage(err))
		}
		cancel()
	}
	if client != nil {
		client.Kill()
	}
	p.mu.Lock()
	p.state = StateStopped
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
	p.mu.Unlock()
}

// hostServices serves the Host API to one plugin.
type hostServices struct {
	pb.UnimplementedHostServer
	plugin string
	bus    *events.Bus
	log    hclog.Logger
}

func (h *hostServices) Publish(_ context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	if req.Event == nil || strings.TrimSpace(req.Event.Type) == "" {
		return nil, status.Error(codes.InvalidArgument, "event type is required")
	}
	if h.bus == nil {
		return nil, status.Error(codes.Unavailable, "no event bus")
	}
	if len(req.Event.Data) > 0 && !json.Valid(req.Event.Data) {
		return nil, status.Error(codes.InvalidArgument, "event data must be JSON")
	}
	ev := h.bus.Publish(events.Event{Type: req.Event.Type, Source: h.plugin, Data: req.Event.Data})
	return &pb.PublishResponse{Id: ev.ID}, nil
}

func (h *hostServices) Log(_ context.Context, req *pb.LogRequest) (*pb.LogResponse, error) {
	var fields map[string]any
	if len(req.Fields) > 0 {
		_ = json.Unmarshal(req.Fields, &fields)
	}
	args := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		args = append(args, k, v)
	}
	level := hclog.LevelFromString(req.Level)
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	h.log.Log(level, req.Message, args...)
	return &pb.LogResponse{}, nil
}
