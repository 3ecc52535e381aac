// Package supervisor starts plugin processes over go-plugin, keeps them
// alive (restarting a crashed plugin with backoff), and gives the host a
// handle on each (Process) to call it through the seam.
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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
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

// Builtin reports whether the spec runs a built-in area from the cairn
// binary; only those inherit the host's environment (docs/decisions.md D23).
func (s Spec) Builtin() bool { return s.Source == "builtin" }

// Fingerprint identifies everything about a spec that requires a restart
// when it changes, including the executable's current version. The
// executable is identified by its stat key (size, mtime, ctime, inode,
// device), not its content: hashing a 47 MB binary once per area was most
// of the host's start-up time.
func (s Spec) Fingerprint() string {
	h := sha256.New()
	key := "missing"
	if k, err := trust.Stat(s.Path); err == nil {
		key = k.String()
	}
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{s.Source, s.Path, s.Args, s.Env, s.SHA256, s.Settings, s.Required, key})
	return hex.EncodeToString(h.Sum(nil))
}

// State of a plugin.
type State string

// Process states.
const (
	StateStarting State = "starting"
	// StateOpening: the process is configured and described, and its
	// health says it is still opening (sdk.Hooks.Open): its tools are
	// listed, and its calls, events and resource reads wait until it is
	// open (opening.go).
	StateOpening    State = "opening"
	StateRunning    State = "running"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
)

// Started reports whether a process of the plugin is configured and
// described: running, or still opening.
func (s State) Started() bool { return s == StateRunning || s == StateOpening }

// Env is what every plugin is started with.
type Env struct {
	Root, DataDir, Mode, HostVersion string
	// ExtraEnv is added to every plugin's environment (CAIRN_* settings).
	ExtraEnv []string
	Logger   hclog.Logger
	Bus      *events.Bus
	// StartTimeout bounds handshake + Configure + Describe.
	StartTimeout time.Duration
	// OpenWait bounds how long a call waits for a plugin that is still
	// opening (DefaultOpenWait when zero); the open itself is not
	// bounded, since the plugin reports its progress meanwhile.
	OpenWait time.Duration
	// Backoff is the restart schedule; zero fields take DefaultBackoff's.
	Backoff Backoff
	// AskClient answers a plugin's Host.AskClient: a request to the MCP
	// client of a call the plugin is running; it returns the client's
	// result, or the typed error that kept the client from answering. Nil
	// refuses every request.
	AskClient func(ctx context.Context, plugin string, ask seam.Ask) (json.RawMessage, *errs.Error)
	// CallAreaTool answers a plugin's Host.CallAreaTool: another area's
	// tool run for a call the plugin is running, as that call's caller.
	// Nil refuses every request.
	CallAreaTool func(ctx context.Context, plugin string, call seam.ToolCallback) seam.Result
}

// Hooks let the host react to lifecycle changes.
type Hooks struct {
	// Restarted runs after a crashed plugin is back and described. The
	// first start is reported by Start's return instead.
	Restarted func(p *Process)
	// Down runs when a running plugin's process ends unexpectedly.
	Down func(p *Process, err error)
	// Failed runs when a plugin's first start fails. A plugin that ran
	// once is restarted forever instead (see Backoff).
	Failed func(p *Process, err error)
	// Opened runs when a plugin that was opening (StateOpening) is
	// open; its resources and prompts are complete from then on.
	Opened func(p *Process)
}

// awaitBudget is how long a call waits for a restart that is due soon;
// beyond it the call answers 503 with retry_after_ms at once.
const awaitBudget = 5 * time.Second

// errStopping ends a launch that lost the race with Stop.
var errStopping = errors.New("plugin is stopping")

// Process is the host's handle on one supervised plugin process: it
// starts the process, restarts it when it dies and carries calls to it.
type Process struct {
	spec    Spec
	env     Env
	hooks   Hooks
	log     hclog.Logger
	backoff Backoff
	// image holds a pinned or trusted executable's checked bytes, loaded
	// at the first start and run at every start after it (image_linux.go).
	imageMu sync.Mutex
	image   *image

	// stopCtx ends with Stop, cancelling a restart's Configure/Describe.
	stopCtx    context.Context
	stopCancel context.CancelFunc
	// loops counts the watch goroutines, so Stop returns only once no
	// restart can still be under way.
	loops sync.WaitGroup

	mu     sync.Mutex
	state  State
	client *plugin.Client
	rpc    *hostconn.Conn
	runner *procRunner
	// desc is the latest description (nil before the first start) and
	// tools its tools.
	desc  *seam.Description
	tools []seam.Tool
	// changed is closed and replaced on every state change: waiters
	// select on it and look again. Only setState closes it, under mu, so
	// it is closed exactly once.
	changed chan struct{}
	// pending is the client of a launch in flight and pendingRunner its
	// process, for Stop to kill: go-plugin's Kill does nothing for a
	// client whose handshake has not finished.
	pending       *plugin.Client
	pendingRunner *procRunner
	lastErr       string
	lastExit      string
	exitLine      *lastLine
	nextAttempt   time.Time
	attempting    bool
	restarts      int
	failures      int
	stopping      bool
	startedAt     time.Time
	unsub         func()
	subKey        string
	// lane is the running process's call lane, its one call transport
	// (docs/decisions.md D34); nil when it offers none, CAIRN_CALL_LANE is
	// "off", or the connection ended, and then calls take the CallTool
	// stream.
	lane *hostconn.Lane
	// laneBatches: the running process's lane takes event batches
	// (ConfigureResponse.lane_event_batches).
	laneBatches bool
	// openingStep is what an opening process last said it is doing, and
	// openingSince when this process started opening.
	openingStep  string
	openingSince time.Time
}

// Start launches the plugin and waits until it is configured and described.
// On failure the returned error says why, and the process is in StateFailed.
func Start(ctx context.Context, spec Spec, env Env, hooks Hooks) (*Process, error) {
	if env.StartTimeout == 0 {
		env.StartTimeout = 30 * time.Second
	}
	if env.OpenWait == 0 {
		env.OpenWait = DefaultOpenWait
	}
	if env.Logger == nil {
		env.Logger = hclog.NewNullLogger()
	}
	p := &Process{
		spec: spec, env: env, hooks: hooks, log: env.Logger.Named(spec.Name),
		backoff: env.Backoff.withDefaults(), state: StateStarting, changed: make(chan struct{}),
	}
	p.stopCtx, p.stopCancel = context.WithCancel(context.Background())
	if err := p.launch(ctx, false); err != nil {
		p.setFailed(err)
		return p, err
	}
	return p, nil
}

// setState changes the state and wakes every waiter. Call with mu held.
func (p *Process) setState(s State) {
	p.state = s
	close(p.changed)
	p.changed = make(chan struct{})
}

// Spec returns the plugin's spec.
func (p *Process) Spec() Spec { return p.spec }

// Name returns the host's name for the plugin.
func (p *Process) Name() string { return p.spec.Name }

// Describe returns the latest description, less the tools (the zero
// Description before the first start).
func (p *Process) Describe() seam.Description {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.desc == nil {
		return seam.Description{}
	}
	return *p.desc
}

// Tools returns the tools of the latest description as registry tools
// (none before the first start). With compile, each one's schemas are
// compiled now, and a schema that does not compile is an error naming the
// tool (toolFromSeam).
func (p *Process) Tools(compile bool) ([]*registry.Tool, error) {
	p.mu.Lock()
	described := p.tools
	p.mu.Unlock()
	tools := make([]*registry.Tool, 0, len(described))
	for _, t := range described {
		rt, err := toolFromSeam(t, compile)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		tools = append(tools, rt)
	}
	return tools, nil
}

// Status is a snapshot for health and the CLI.
type Status struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
	Path    string `json:"path"`
	// SHA256 is the digest of the bytes a trusted or pinned plugin runs.
	SHA256 string `json:"sha256,omitempty"`
	State  State  `json:"state"`
	// Opening is what an opening plugin last said it is doing, with how
	// long it has been opening.
	Opening   string `json:"opening,omitempty"`
	PID       int    `json:"pid,omitempty"`
	Protocol  int    `json:"protocol"`
	Restarts  int    `json:"restarts"`
	Tools     int    `json:"tools"`
	LastError string `json:"last_error,omitempty"`
	// LastExit is how the process last ended unexpectedly: its exit
	// status or signal, and its last stderr line.
	LastExit string `json:"last_exit,omitempty"`
	// NextAttempt is when a restarting plugin is started again (ISO-8601
	// UTC); empty while an attempt is under way or when none is planned.
	NextAttempt string `json:"next_attempt,omitempty"`
}

// Status returns a snapshot of the plugin.
func (p *Process) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Name: p.spec.Name, Source: p.spec.Source, Path: p.spec.Path, SHA256: p.spec.SHA256, State: p.state, Restarts: p.restarts, LastError: p.lastErr}
	if p.lastExit != "" {
		st.LastExit = withLastLine(p.lastExit, p.exitLine)
	}
	if p.desc != nil {
		st.Version = p.desc.Version
		st.Tools = len(p.tools)
		st.Protocol = p.desc.ProtocolVersion
	}
	if p.runner != nil && p.state.Started() {
		st.PID = p.runner.pid
	}
	if p.state == StateOpening {
		st.Opening = p.openingLine()
	}
	if p.state == StateRestarting && !p.nextAttempt.IsZero() {
		st.NextAttempt = p.nextAttempt.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return st
}

// PID returns the current process id (0 when not running).
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runner == nil {
		return 0
	}
	return p.runner.pid
}

// minimalEnvKeys are the host variables a plugin that is not built in
// gets; everything else it needs comes from its config entry's env.
var minimalEnvKeys = []string{"PATH", "HOME", "TMPDIR", "LANG"}

// processEnv is the environment of the plugin process on top of
// go-plugin's own entries (cookie, protocol versions, socket dir).
func (p *Process) processEnv(goPlugin []string) []string {
	env := append([]string(nil), goPlugin...)
	if !p.spec.Builtin() {
		for _, k := range minimalEnvKeys {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	env = append(env, p.env.ExtraEnv...)
	return append(env, p.spec.Env...)
}

// checkedImage returns the image of a plugin whose spec names its sha256
// (a config pin, or the operator's trust of a workspace plugin): the bytes
// checked at its first start, run again at every restart. nil for a plugin
// that is run from its path (a built-in area, an operator's own plugin).
func (p *Process) checkedImage() (*image, error) {
	if p.spec.SHA256 == "" {
		return nil, nil
	}
	p.imageMu.Lock()
	defer p.imageMu.Unlock()
	if p.image == nil {
		im, err := loadImage(p.spec.Name, p.spec.Path, p.spec.SHA256)
		if err != nil {
			return nil, err
		}
		p.image = im
	}
	return p.image, nil
}

func (p *Process) launch(ctx context.Context, restart bool) error {
	im, err := p.checkedImage()
	if err != nil {
		return err
	}
	var r *procRunner
	ll := newLastLine()
	hostSvc := &hostServices{plugin: p.spec.Name, bus: p.env.Bus, askClient: p.env.AskClient, callAreaTool: p.env.CallAreaTool}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostconn.Handshake,
		VersionedPlugins: hostconn.Plugins(hostSvc, p.log),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		// Plugins that are not built in never see the host's
		// environment (ANTHROPIC_API_KEY, cloud credentials, ...).
		SkipHostEnv: !p.spec.Builtin(),
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.stopping {
				return nil, errStopping
			}
			nr, err := newProcRunner(p.log, p.spec.Path, im, p.spec.Args, p.processEnv(cmd.Env), ll)
			if err != nil {
				return nil, err
			}
			r, p.pendingRunner = nr, nr
			return nr, nil
		},
		Logger:          p.log,
		GRPCDialOptions: hostconn.DialOptions(),
		StartTimeout:    p.env.StartTimeout,
		SyncStdout:      p.log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}),
		SyncStderr:      io.MultiWriter(p.log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}), ll),
	})
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return errStopping
	}
	p.pending = client
	p.mu.Unlock()
	fail := func(err error) error {
		client.Kill()
		p.mu.Lock()
		if p.pending == client {
			p.pending, p.pendingRunner = nil, nil
		}
		stopping := p.stopping
		p.mu.Unlock()
		if stopping {
			return errStopping
		}
		return err
	}
	rpcClient, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("plugin %s (%s) failed its handshake: %w", p.spec.Name, p.spec.Path, err))
	}
	rpc, err := hostconn.Open(rpcClient, p.spec.Name)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", p.spec.Name, err))
	}
	cctx, cancel := context.WithTimeout(ctx, p.env.StartTimeout)
	defer cancel()
	describe := describeAfterConfigure
	if p.spec.Builtin() {
		describe = describeBesideConfigure(cctx, rpc)
	}
	conf, err := rpc.Configure(cctx, hostconn.Config{
		Root: p.env.Root, DataDir: p.env.DataDir,
		Mode: p.env.Mode, HostVersion: p.env.HostVersion, Settings: p.spec.Settings,
	})
	if err != nil {
		// An early Describe ends with the kill or with cctx (buffered).
		return fail(fmt.Errorf("plugin %s could not start: %s", p.spec.Name, grpcMessage(err)))
	}
	calls := p.dialLane(cctx, conf.CallLane)
	desc, tools, err := describe(cctx, rpc)
	if err != nil {
		closeLane(calls)
		return fail(fmt.Errorf("plugin %s: describe: %s%s", p.spec.Name, grpcMessage(err), exitedWith(err, r, ll)))
	}
	if desc.Name != p.spec.Name {
		p.log.Warn("plugin describes itself under another name; the host uses its own", "declared", desc.Name, "name", p.spec.Name)
	}
	opening, step := p.stillOpening(cctx, rpc)

	p.mu.Lock()
	p.pending, p.pendingRunner = nil, nil
	if p.stopping {
		// Stop ran while this process started: it is not ours to keep.
		p.mu.Unlock()
		closeLane(calls)
		client.Kill()
		return errStopping
	}
	p.client, p.rpc, p.runner, p.desc, p.tools, p.lane = client, rpc, r, &desc, tools, calls
	p.laneBatches = conf.LaneEventBatches
	p.startedAt = time.Now()
	p.lastErr, p.nextAttempt, p.attempting = "", time.Time{}, false
	if restart {
		p.restarts++
	}
	p.loops.Add(1)
	if opening {
		p.loops.Add(1)
		p.openingStep, p.openingSince = step, time.Now()
		p.setState(StateOpening)
	} else {
		p.setState(StateRunning)
	}
	p.mu.Unlock()

	p.subscribe(desc.Subscriptions)
	go p.watch(r)
	if opening {
		go p.followOpening(rpc, r)
	}
	if restart && p.hooks.Restarted != nil {
		p.hooks.Restarted(p)
	}
	if opening {
		p.log.Info("plugin started; still opening, its calls wait", "path", p.spec.Path, "version", desc.Version, "tools", len(tools), "pid", r.pid, "step", step)
		return nil
	}
	p.log.Info("plugin ready", "path", p.spec.Path, "version", desc.Version, "tools", len(tools), "pid", r.pid, "protocol", client.NegotiatedVersion())
	return nil
}

// exitedWith says how the process ended when err is its connection
// closing under a start (a plugin whose open work (sdk.Hooks.Open) failed at once exits
// between Configure and Describe): "" otherwise.
func exitedWith(err error, r *procRunner, ll *lastLine) string {
	if r == nil || !connectionLost(err) {
		return ""
	}
	select {
	case <-r.exited:
		return " (the process ended: " + withLastLine(r.exitStatus(), ll) + ")"
	case <-time.After(2 * time.Second):
		return ""
	}
}

func grpcMessage(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}

// watch waits for the process to end and restarts it unless the host is
// stopping it.
func (p *Process) watch(r *procRunner) {
	defer p.loops.Done()
	<-r.exited
	p.mu.Lock()
	if p.stopping || p.runner != r {
		p.mu.Unlock()
		return
	}
	if time.Since(p.startedAt) >= p.backoff.Reset {
		p.failures = 0 // it ran long enough: this is a new incident
	}
	p.failures++
	p.lastExit, p.exitLine = r.exitStatus(), r.lastLine
	p.lastErr = "plugin process exited unexpectedly: " + p.lastExit
	p.attempting = true // until restartLoop plans the next attempt
	p.setState(StateRestarting)
	client, failures, calls := p.client, p.failures, p.lane
	p.lane = nil
	p.mu.Unlock()

	closeLane(calls) // fails the calls in flight at once
	client.Kill()    // reap go-plugin's goroutines and socket dir
	p.log.Error("plugin crashed; restarting", "exit", p.lastExitSnapshot(), "consecutive_failures", failures)
	if p.hooks.Down != nil {
		p.hooks.Down(p, errors.New("plugin process exited unexpectedly"))
	}
	p.restartLoop()
}

func (p *Process) lastExitSnapshot() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return withLastLine(p.lastExit, p.exitLine)
}

// restartLoop starts the plugin again after the backoff delay, and again
// after every failed attempt, until it runs or the host stops it. It never
// gives up: a plugin whose binary is being rebuilt, or whose store is
// briefly locked, comes back by itself.
func (p *Process) restartLoop() {
	for {
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		delay := p.backoff.Delay(p.failures)
		p.nextAttempt, p.attempting = time.Now().Add(delay), false
		p.setState(StateRestarting)
		p.mu.Unlock()

		timer := time.NewTimer(delay)
		select {
		case <-p.stopCtx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}

		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.nextAttempt, p.attempting = time.Time{}, true
		p.setState(StateRestarting)
		p.mu.Unlock()

		err := p.launch(p.stopCtx, true)
		if err == nil || errors.Is(err, errStopping) {
			return
		}
		p.mu.Lock()
		p.failures++
		p.lastErr = "restart failed: " + err.Error()
		failures := p.failures
		p.mu.Unlock()
		p.log.Error("plugin restart failed; trying again", "error", err, "consecutive_failures", failures, "next_in", p.backoff.Delay(failures))
	}
}

func (p *Process) setFailed(err error) {
	p.mu.Lock()
	p.lastErr = err.Error()
	p.setState(StateFailed)
	p.mu.Unlock()
	if p.hooks.Failed != nil {
		p.hooks.Failed(p, err)
	}
}

// await returns the RPC client once the plugin is running. During a
// restart it waits only when the attempt is under way or due within
// awaitBudget; otherwise, and when the budget runs out, it answers 503
// ERR_PLUGIN_UNAVAILABLE with details.retry_after_ms at once.
//
// A plugin that is opening is waited for longer, up to Env.OpenWait
// (opening.go): it reports its progress, and its open is not retried.
func (p *Process) await(ctx context.Context) (*hostconn.Conn, error) {
	start := time.Now()
	deadline := start.Add(awaitBudget)
	timer := time.NewTimer(awaitBudget)
	defer timer.Stop()
	for {
		p.mu.Lock()
		state, rpc, changed, lastErr := p.state, p.rpc, p.changed, p.lastErr
		next, attempting := p.nextAttempt, p.attempting
		p.mu.Unlock()
		switch state {
		case StateRunning:
			return rpc, nil
		case StateFailed, StateStopped:
			return nil, errs.Newf(503, errs.PluginUnavailable, "plugin %s is %s: %s", p.spec.Name, state, lastErr)
		case StateRestarting:
			if !attempting && next.After(deadline) {
				return nil, p.unavailable(lastErr, time.Until(next))
			}
		case StateOpening:
			if err := p.awaitOpen(ctx, start); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, p.unavailable(lastErr, time.Until(next))
		case <-timer.C:
			return nil, p.unavailable(lastErr, time.Until(next))
		}
	}
}

// unavailable is the answer for a call that reaches a restarting plugin.
func (p *Process) unavailable(lastErr string, retryAfter time.Duration) error {
	ms := retryAfter.Milliseconds()
	if ms < 100 {
		ms = 100 // an attempt is under way; give it a moment
	}
	// The call was never sent: it is known not to have happened.
	return errs.Newf(503, errs.PluginUnavailable, "plugin %s is restarting (%s); retry in %d ms", p.spec.Name, lastErr, ms).
		With("retry_after_ms", ms).With("retryable", true).With("applied", false)
}

// CallOptions says how the plugin runs one call.
type CallOptions struct {
	// ClientChannel lets the plugin ask the call's client (sampling,
	// elicitation) while the call runs; 0 when it may not.
	ClientChannel uint64
	// ToolChannel lets the plugin call other areas' tools as the call's
	// caller while the call runs; 0 when it may not.
	ToolChannel uint64
	// RetrySafe: the call may be sent again after the plugin died under
	// it (see callTool).
	RetrySafe bool
}

// Call runs a tool call on the plugin, forwarding its progress and log
// lines to c.Progress and c.Log (when set), and returns its outcome: the
// plugin's result, or a typed error when the plugin could not answer. The
// output is returned as the plugin sent it (empty: `{}`), unchecked.
func (p *Process) Call(ctx context.Context, c *pipeline.Call, opts CallOptions) *seam.Result {
	res, err := p.callTool(ctx, callToSeam(c, opts), progressFunc(c), logFunc(c), opts.RetrySafe)
	if err != nil {
		return pipeline.Fail(errs.From(err))
	}
	return res
}

// callTool runs a tool on the plugin, streaming progress to onProgress
// and the plugin's log lines for the client to onLog (either may be nil).
//
// When the plugin dies under a call, a retrySafe call (a read, a tool that
// is idempotent by nature, or a write under an idempotency key its tool
// honours) is sent again, marked as a replay, once the plugin is back: it
// takes effect at most once (docs/decisions.md D32). Any other call fails
// with ERR_PLUGIN_UNAVAILABLE and details.applied "unknown": it may have
// taken effect, so it is not replayed and the caller is not told to retry.
func (p *Process) callTool(ctx context.Context, req seam.Call, onProgress func(seam.Progress), onLog func(seam.LogLine), retrySafe bool) (*seam.Result, error) {
	res, runner, err := p.callOnce(ctx, req, onProgress, onLog)
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
	req.Replay = true
	res, _, err = p.callOnce(ctx, req, onProgress, onLog)
	if err != nil {
		e := p.callError(ctx, err)
		if te, ok := errs.As(e); ok && te.Details["applied"] == false {
			// The replay was not sent, but the first attempt was.
			return nil, p.lostDuringCall()
		}
		return nil, e
	}
	return res, nil
}

// callOnce sends the call on the plugin's one call transport, chosen at
// the handshake (docs/decisions.md D34): the call lane when the plugin
// offered one and CAIRN_CALL_LANE is not "off", else the CallTool stream.
// Both carry the call's progress and log lines ahead of its result. A lane
// whose connection ended is dropped, and later calls to the same process
// take the stream.
func (p *Process) callOnce(ctx context.Context, req seam.Call, onProgress func(seam.Progress), onLog func(seam.LogLine)) (*seam.Result, *procRunner, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	r, calls := p.runner, p.lane
	p.mu.Unlock()
	if calls != nil {
		res, err := calls.Call(ctx, req, onProgress, onLog)
		if errors.Is(err, hostconn.ErrLaneClosed) {
			p.dropLane(calls)
		}
		return res, r, err
	}
	res, err := rpc.Call(ctx, req, onProgress, onLog)
	return res, r, err
}

// connectionLost reports whether err means the plugin's connection went
// away (the process died, or the host closed the connection after seeing it
// die) rather than the call failing.
func connectionLost(err error) bool {
	if errors.Is(err, hostconn.ErrLaneClosed) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return true
	}
	return false
}

func (p *Process) callError(ctx context.Context, err error) error {
	if _, typed := errs.As(err); typed {
		return err
	}
	if ctx.Err() != nil {
		return errs.New(499, errs.Cancelled, "the call was cancelled: "+ctx.Err().Error())
	}
	if connectionLost(err) {
		return p.lostDuringCall()
	}
	if status.Code(err) == codes.DeadlineExceeded {
		return errs.New(504, errs.Cancelled, "the call ran past its deadline")
	}
	return errs.Newf(502, errs.PluginUnavailable, "plugin %s: %s", p.spec.Name, grpcMessage(err))
}

// lostDuringCall is the answer for a call whose plugin died under it and
// that could not be replayed: it may or may not have taken effect.
func (p *Process) lostDuringCall() *errs.Error {
	return errs.Newf(503, errs.PluginUnavailable,
		"plugin %s stopped during the call and is being restarted; the call may or may not have taken effect, so check its effect before calling it again", p.spec.Name).
		With("applied", "unknown").With("retryable", false)
}

// ListResources asks the plugin for its resources.
func (p *Process) ListResources(ctx context.Context) (seam.Resources, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return seam.Resources{}, err
	}
	return rpc.ListResources(ctx)
}

// ReadResource reads one resource from the plugin. err is set when the
// plugin could not be asked; its own refusal is the result's Err.
func (p *Process) ReadResource(ctx context.Context, uri string) (seam.ReadResult, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return seam.ReadResult{}, err
	}
	res, err := rpc.ReadResource(ctx, uri)
	if err != nil {
		return seam.ReadResult{}, p.callError(ctx, err)
	}
	return res, nil
}

// Health asks the plugin for its health, within a short deadline.
func (p *Process) Health(ctx context.Context) (seam.Health, error) {
	p.mu.Lock()
	state, rpc := p.state, p.rpc
	p.mu.Unlock()
	if !state.Started() {
		return seam.Health{}, fmt.Errorf("plugin %s is %s", p.spec.Name, state)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return rpc.Health(ctx)
}

// subscribe makes the plugin's one bus subscription for its pattern set,
// so an event that matches several patterns is delivered once. A restart
// that declares the same set keeps the subscription (and its queue).
func (p *Process) subscribe(patterns []string) {
	set := append([]string(nil), patterns...)
	sort.Strings(set)
	key := strings.Join(set, "\x00")
	p.mu.Lock()
	if p.unsub != nil && p.subKey == key {
		p.mu.Unlock()
		return
	}
	old := p.unsub
	p.unsub, p.subKey = nil, ""
	p.mu.Unlock()
	if old != nil {
		old()
	}
	if p.env.Bus == nil || len(set) == 0 {
		return
	}
	unsub := p.env.Bus.SubscribeLocalBatch(p.spec.Name, set, p.deliverBatch)
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		unsub()
		return
	}
	p.unsub, p.subKey = unsub, key
	p.mu.Unlock()
}

// deliver runs the plugin's handlers for ev; its error reaches a publisher
// that awaits the event (events.Bus.PublishAwait).
func (p *Process) deliver(ev events.Event) error {
	if ev.Source == p.spec.Name {
		return nil // a plugin does not hear its own events
	}
	if err := p.awaitOpen(context.Background(), time.Now()); err != nil {
		p.log.Warn("event not delivered", "event", ev.Type, "id", ev.ID, "error", err)
		return fmt.Errorf("plugin %s did not take the event: %w", p.spec.Name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	rpc, err := p.await(ctx)
	if err != nil {
		p.log.Warn("event not delivered", "event", ev.Type, "id", ev.ID, "error", err)
		return fmt.Errorf("plugin %s did not take the event: %w", p.spec.Name, err)
	}
	req := seamEvent(ev)
	p.mu.Lock()
	calls := p.lane
	p.mu.Unlock()
	if calls != nil {
		err = calls.Deliver(ctx, req)
		if errors.Is(err, hostconn.ErrLaneClosed) {
			p.dropLane(calls)
		}
	} else {
		err = rpc.HandleEvent(ctx, req)
	}
	if err != nil {
		p.log.Warn("plugin failed to handle event", "event", ev.Type, "id", ev.ID, "error", grpcMessage(err))
		return fmt.Errorf("plugin %s failed to handle the event: %s", p.spec.Name, grpcMessage(err))
	}
	return nil
}

// Stop asks the plugin to release its resources, then ends the process.
// It also ends a restart in flight and returns only when no restart can
// start the plugin again.
func (p *Process) Stop(ctx context.Context) {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return
	}
	p.stopping = true
	client, pending, pendingRunner, rpc, state, unsub, calls := p.client, p.pending, p.pendingRunner, p.rpc, p.state, p.unsub, p.lane
	p.unsub, p.subKey, p.lane = nil, "", nil
	p.setState(StateStopped)
	p.mu.Unlock()
	p.stopCancel()
	if unsub != nil {
		unsub()
	}
	if state.Started() && rpc != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := rpc.Stop(sctx); err != nil {
			p.log.Warn("plugin stop hook failed", "error", grpcMessage(err))
		}
		cancel()
	}
	closeLane(calls)
	if pendingRunner != nil {
		_ = pendingRunner.Kill(context.Background())
	}
	if pending != nil {
		pending.Kill()
	}
	if client != nil {
		client.Kill()
	}
	p.loops.Wait()
	p.imageMu.Lock()
	p.image.close()
	p.image = nil
	p.imageMu.Unlock()
}
