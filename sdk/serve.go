package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/stdoutguard"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// Serve runs the plugin until the host stops it or dies. It never returns
// normally: the process exits with status 0 after a clean stop.
//
// Started by hand (not by a cairn host), it prints how to install the plugin
// and exits with status 1.
func Serve(p *Plugin) {
	if os.Getenv(protocol.Handshake.MagicCookieKey) != protocol.Handshake.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "%s is a cairn plugin: cairn starts it, you don't.\n"+
			"Put the executable (named cairn-plugin-%s) in cairn's plugin directory or name it in the config file,\n"+
			"then run `cairn plugins` to check it loads.\n", os.Args[0], p.name)
		os.Exit(1)
	}
	// A dead host closes our stderr; let writes fail instead of killing the
	// process, so the parent watcher can run the stop hooks.
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &server{p: p}
	stopTracing, err := telemetry.Setup(ctx, "cairn-plugin-"+p.name)
	if err != nil {
		p.logger.Warn("traces are not exported", "error", err)
	} else {
		p.AddHooks(Hooks{Stop: stopTracing})
	}
	go watchParent(ctx, p, os.Getppid())
	go func() {
		// The host stops plugins over gRPC; a signal means an operator or a
		// dying session wants us gone, so release resources and leave.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		<-ch
		shutdown(p, 0)
	}()

	// go-plugin writes the handshake to os.Stdout, then takes it over.
	os.Stdout = stdoutguard.Stdout()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			1: {protocol.PluginKey: &protocol.GRPCPluginV1{NewServer: func(b *plugin.GRPCBroker) pb.PluginServer {
				srv.broker = b
				return srv
			}}},
		},
		GRPCServer: protocol.NewGRPCServer,
		Logger:     p.logger,
	})
	shutdown(p, 0)
}

var shutdownOnce sync.Once

func shutdown(p *Plugin, code int) {
	shutdownOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.stop(ctx); err != nil {
			p.logger.Error("stop hooks failed", "error", err)
		}
		os.Exit(code)
	})
}

// watchParent exits the plugin when its parent (the host) dies: the plugin
// is re-parented, so getppid changes. The host also sets a parent-death
// signal, but that is tied to the thread that forked us; polling is the
// belt to those braces.
func watchParent(ctx context.Context, p *Plugin, ppid int) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				p.logger.Warn("host process is gone; stopping", "host_pid", ppid)
				shutdown(p, 0)
			}
		}
	}
}

// server implements the v1 plugin service over a Plugin.
type server struct {
	pb.UnimplementedPluginServer
	p      *Plugin
	broker *plugin.GRPCBroker
	idle   idleTrimmer
	// trimOnce starts the idle trimmer at the first Configure.
	trimOnce sync.Once
	// laneMu guards unlisten, which closes the lane's socket and
	// removes its folder while the host has not yet connected (lane.go).
	laneMu   sync.Mutex
	unlisten func()
}

func (s *server) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	cfg, hostServiceID := convert.ConfigureFromProto(req)
	if s.broker != nil && hostServiceID != 0 {
		conn, err := s.broker.DialWithOptions(hostServiceID, protocol.DialOptions()...)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "dial host services: %v", err)
		}
		s.p.setHost(newGRPCHost(pb.NewHostClient(conn), s.p.logger))
	}
	err := s.p.configure(ctx, cfg)
	if err == nil {
		err = s.open(cfg, openGraceWithin(ctx))
	}
	if err != nil {
		e := errs.From(err)
		return nil, status.Error(codes.FailedPrecondition, e.Code+": "+e.Message)
	}
	var resp seam.Configured
	if s.broker != nil { // served by a host, not a test
		s.trimOnce.Do(func() { go s.idle.run(context.Background()) })
		if path, err := s.openLane(); err != nil {
			s.p.logger.Warn("no call lane; calls use gRPC", "error", err)
		} else {
			resp.CallLane = path
			resp.LaneEventBatches = laneEventBatches()
		}
	}
	return convert.ConfiguredToProto(resp), nil
}

// openGrace is how long Configure waits for the open work: work done
// by then answers Configure as a hook of its own would, its error refusing
// the start; longer work goes on after the answer. An ordinary open (a
// dozen small transactions, each with its fsync) is done well within it
// even on a loaded machine, so a plugin is only seen opening when it has
// real work to do.
var openGrace = 5 * time.Second

// openGraceWithin is openGrace, or half of what is left of the host's
// deadline for Configure when that is less: the answer must reach a host
// that allows a start little time.
func openGraceWithin(ctx context.Context) time.Duration {
	grace := openGrace
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(dl)/2)
	}
	return grace
}

// open runs the open work (opening.go), waiting up to grace for it. It is
// marked as running before it starts, so the host's first look at the
// plugin's health after a Configure answered early says "opening".
func (s *server) open(cfg Config, grace time.Duration) error {
	run, err := s.p.beginOpen(context.Background(), cfg)
	if run == nil {
		return err
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- run() }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	go s.openAfterConfigure(done, start)
	return nil
}

// openAfterConfigure waits for open work that outlasted Configure. When
// it fails the process ends, its last stderr line the error, and the host
// restarts it as after a crash (docs/decisions.md D34).
func (s *server) openAfterConfigure(done <-chan error, start time.Time) {
	if err := <-done; err != nil {
		s.p.logger.Error("the plugin could not open; exiting so the host restarts it", "error", err.Error())
		if s.broker != nil { // served by a host, not a test
			shutdown(s.p, 1)
		}
		return
	}
	s.p.logger.Info("plugin open", "took", time.Since(start).Round(time.Millisecond).String())
}

func (s *server) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	d := seam.Description{
		Name: s.p.name, Version: s.p.version, ProtocolVersion: protocol.Version,
		Description: s.p.description, Subscriptions: s.p.subscriptions(), SDKVersion: Version,
	}
	infos := s.p.toolInfos()
	tools := make([]seam.Tool, 0, len(infos))
	for _, t := range infos {
		tools = append(tools, seamTool(t))
	}
	return convert.DescribeToProto(d, tools), nil
}

// seamTool is a declared tool as it crosses to the host: every annotation
// is sent, unset ones as false.
func seamTool(t ToolInfo) seam.Tool {
	return seam.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, Toolset: t.Toolset,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		HonoursIdempotency: t.HonoursIdempotency, TaskSupport: string(t.TaskSupport), CallsTools: t.CallsTools,
		Annotations: &seam.Annotations{
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, Idempotent: t.Idempotent, OpenWorld: t.OpenWorld, Title: t.Title,
		},
	}
}

// CallTool runs one call on the gRPC stream: the transport for a host that
// did not take the call lane (docs/decisions.md D34).
func (s *server) CallTool(req *pb.CallToolRequest, stream pb.Plugin_CallToolServer) error {
	res := s.call(stream.Context(), convert.CallFromProto(req), func(ev *pb.CallToolEvent) { _ = stream.Send(ev) })
	return stream.Send(convert.ResultEventToProto(res))
}

// call runs one tool call for either transport, the gRPC stream or the
// lane: the call's caller, id, idempotency key and client channel go
// into the handler's context, and the progress and log lines the call
// asks for (WantsProgress, LogLevel) go to send, one at a time. Once call
// returns, send is not called again: a handler's goroutine that reports
// late is dropped, so nothing follows the result.
func (s *server) call(ctx context.Context, c seam.Call, send func(*pb.CallToolEvent)) seam.Result {
	ctx, endSpan := traceCall(ctx, c)
	if c.Task != nil {
		// Answered at once: the call's progress, log lines and client
		// channel end with this answer, so the task has none of them.
		res := s.startTask(ctx, c)
		endSpan(res)
		return res
	}
	ctx = s.withToolCaller(s.withClientAsker(callContext(ctx, c), c), c)
	var sendMu sync.Mutex
	done := false
	emit := func(ev *pb.CallToolEvent) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if !done {
			send(ev)
		}
	}
	if c.WantsProgress {
		ctx = WithProgress(ctx, func(progress, total float64, message string) {
			emit(convert.ProgressEventToProto(seam.Progress{Progress: progress, Total: total, Message: message}))
		})
	}
	ctx = WithLog(ctx, c.LogLevel, func(level string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			raw, _ = json.Marshal(fmt.Sprint(data))
		}
		emit(convert.LogEventToProto(seam.LogLine{Level: level, Logger: s.p.name, Data: raw}))
	})
	s.idle.called()
	res := seamResult(s.p.invoke(ctx, c.Tool, c.Args))
	sendMu.Lock()
	done = true
	sendMu.Unlock()
	endSpan(res)
	return res
}

// callContext carries the call's caller, id and idempotency key.
func callContext(ctx context.Context, c seam.Call) context.Context {
	ctx = WithCaller(ctx, c.Caller)
	ctx = withRequestID(ctx, c.RequestID)
	if c.IdempotencyKey != "" {
		ctx = WithIdempotency(ctx, Idempotency{Key: c.IdempotencyKey, Client: c.IdempotencyClient, Replay: c.Replay})
	}
	return ctx
}

// seamResult is a call's outcome as it crosses to the host.
func seamResult(r Result) seam.Result {
	return seam.Result{Output: r.Output, Err: r.Err, Status: r.Status, Content: r.Content}
}

func (s *server) ListResources(ctx context.Context, _ *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	res, tpl, err := s.p.listResources(ctx)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return convert.ResourcesToProto(seam.Resources{Resources: res, Templates: tpl}), nil
}

func (s *server) ReadResource(ctx context.Context, req *pb.ReadResourceRequest) (*pb.ReadResourceResponse, error) {
	uri := convert.ReadRequestFromProto(req)
	contents, err := s.p.readResource(ctx, uri)
	if err != nil {
		e := errs.From(err)
		if e.Status == 0 {
			e.Status = 500
		}
		return convert.ReadResultToProto(seam.ReadResult{Err: e}), nil
	}
	out := seam.ReadResult{Contents: make([]seam.ResourceContents, 0, len(contents))}
	for _, c := range contents {
		if c.URI == "" {
			c.URI = uri
		}
		out.Contents = append(out.Contents, c)
	}
	return convert.ReadResultToProto(out), nil
}

func (s *server) HandleEvent(ctx context.Context, req *pb.HandleEventRequest) (*pb.HandleEventResponse, error) {
	ev, ok := convert.HandleEventFromProto(req)
	if !ok {
		return nil, status.Error(codes.InvalidArgument, "event is required")
	}
	if err := s.p.deliverEvent(ctx, ev); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return convert.EventHandledToProto(), nil
}

func (s *server) Health(ctx context.Context, _ *pb.HealthRequest) (*pb.HealthResponse, error) {
	h, err := seamHealth(s.p.healthReport(ctx))
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return convert.HealthToProto(h), nil
}

// seamHealth is a plugin's health as it crosses to the host: its details
// as a JSON object (none when it has none).
func seamHealth(h Health) (seam.Health, error) {
	out := seam.Health{Status: h.Status, Message: h.Message}
	if h.Details != nil {
		raw, err := json.Marshal(h.Details)
		if err != nil {
			return seam.Health{}, err
		}
		out.Details = raw
	}
	return out, nil
}

func (s *server) Stop(ctx context.Context, _ *pb.StopRequest) (*pb.StopResponse, error) {
	s.closeWaitingLane()
	if err := s.p.stop(ctx); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return convert.StoppedToProto(), nil
}

// grpcHost reaches the host services over the broker.
type grpcHost struct {
	client pb.HostClient
	events *publisher
}

func newGRPCHost(client pb.HostClient, log hclog.Logger) *grpcHost {
	// The queue lives as long as the process: events queued by the last
	// writes are flushed by Stop, before the host ends the process.
	return &grpcHost{client: client, events: newPublisher(context.Background(), client, log)}
}

func (h *grpcHost) publish(_ context.Context, eventType string, data []byte) error {
	h.events.enqueue(seam.Event{Type: eventType, Data: data}, nil)
	return nil
}

func (h *grpcHost) publishDurable(ev seam.Event, done func(error)) {
	h.events.enqueue(ev, done)
}

func (h *grpcHost) flush(ctx context.Context) error { return h.events.flush(ctx) }

func (h *grpcHost) askClient(ctx context.Context, ask seam.Ask) (json.RawMessage, *errs.Error, error) {
	resp, err := h.client.AskClient(ctx, convert.AskToProto(ask))
	if err != nil {
		return nil, nil, err
	}
	result, fail := convert.AnswerFromProto(resp)
	return result, fail, nil
}

func (h *grpcHost) callAreaTool(ctx context.Context, call seam.ToolCallback) (seam.Result, error) {
	resp, err := h.client.CallAreaTool(ctx, convert.CallbackToProto(call))
	if err != nil {
		return seam.Result{}, err
	}
	return convert.CallbackResultFromProto(resp), nil
}

// withClientAsker lets the call's handler ask its client when the host
// opened a channel for it.
func (s *server) withClientAsker(ctx context.Context, c seam.Call) context.Context {
	if c.ClientChannel == 0 {
		return ctx
	}
	s.p.mu.RLock()
	h := s.p.host
	s.p.mu.RUnlock()
	if h == nil {
		return ctx
	}
	return WithClientAsker(ctx, hostAsker(h, c.ClientChannel))
}
