package host

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/session"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// Timestamp formats t as docs/decisions.md D5 fixes it (JavaScript's toISOString).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// NoInput is the input of tools that take no arguments.
type NoInput struct{}

// PingOutput is server_ping's output.
type PingOutput struct {
	OK        bool   `json:"ok"`
	Timestamp string `json:"timestamp"`
}

// DBInfo reports the core store: Kind is "bbolt" or "postgres" (Path is
// then the URL without its password) and LatencyMs one timed trivial read.
type DBInfo struct {
	Open        bool    `json:"open"`
	UserVersion int     `json:"user_version"`
	Path        string  `json:"path"`
	Kind        string  `json:"kind,omitempty"`
	LatencyMs   float64 `json:"latency_ms,omitempty"`
}

// MiddlewareInfo lists the pipeline stages.
type MiddlewareInfo struct {
	Stages []string `json:"stages"`
}

// ToolsInfo counts tools.
type ToolsInfo struct {
	Registered int `json:"registered"`
}

// PluginHealth is one plugin's line in server_health.
type PluginHealth struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Source   string `json:"source"`
	State    string `json:"state"`
	Status   string `json:"status"`
	Message  string `json:"message,omitempty"`
	Restarts int    `json:"restarts"`
	Tools    int    `json:"tools"`
	PID      int    `json:"pid,omitempty"`
	// SHA256 is the digest of the bytes a trusted or pinned plugin runs
	// (docs/decisions.md D36), so an upgrade can be seen to have landed.
	SHA256 string `json:"sha256,omitempty"`
	// LastExit and NextAttempt describe a crashing plugin between restarts
	// (crash loops back off, never give up).
	LastExit    string `json:"last_exit,omitempty"`
	NextAttempt string `json:"next_attempt,omitempty"`
	// Details is what the plugin reports about itself (its store, its
	// queues: sdd's pending_events and events_shed), so an operator sees a
	// backlog before it becomes a problem line. Its problems are lifted
	// into the report's problems instead.
	Details map[string]json.RawMessage `json:"details,omitempty"`
}

// EventsInfo reports the event bus.
type EventsInfo struct {
	Published   uint64 `json:"published"`
	Dropped     uint64 `json:"dropped"`
	Subscribers int    `json:"subscribers"`
}

// HealthOutput is server_health's output: the specification's fields plus
// plugins, problems, calls and events.
type HealthOutput struct {
	Status     string         `json:"status" jsonschema:"enum=ok,enum=degraded"`
	Mode       string         `json:"mode" jsonschema:"enum=FULL,enum=READONLY,enum=TEST,enum=MINIMAL"`
	UptimeMs   int64          `json:"uptime_ms"`
	DB         DBInfo         `json:"db"`
	Middleware MiddlewareInfo `json:"middleware"`
	Tools      ToolsInfo      `json:"tools"`
	Version    string         `json:"version"`
	Timestamp  string         `json:"timestamp"`
	Toolsets   []string       `json:"toolsets"`
	Plugins    []PluginHealth `json:"plugins"`
	Problems   []string       `json:"problems"`
	// Untrusted lists workspace plugins left unstarted until the operator
	// trusts them (docs/decisions.md D23), each with the command that does.
	Untrusted []trust.Untrusted `json:"untrusted,omitempty"`
	Calls     uint64            `json:"calls"`
	Events    EventsInfo        `json:"events"`
	// Cluster is the cluster bus, on PostgreSQL only: whether it follows
	// the other servers, what crossed it and its last error.
	Cluster *events.ClusterStats `json:"cluster,omitempty"`
}

func (h *Host) registerSystemTools() error {
	ping := &registry.Tool{
		Name:          "server_ping",
		Title:         "Ping",
		Description:   "Confirm cairn is reachable.",
		Toolset:       "system",
		InputSchema:   schema.For[NoInput](),
		ReadOnly:      true,
		Idempotent:    true,
		Validator:     schema.MustCompile(schema.For[NoInput]()),
		OutputSchema:  publishedSchema(schema.For[PingOutput]()),
		SuccessSchema: schema.For[PingOutput](),
	}
	health := &registry.Tool{
		Name:          "server_health",
		Title:         "Health",
		Description:   "Server status, plugins and problems such as malformed skill files.",
		Toolset:       "system",
		InputSchema:   schema.For[NoInput](),
		ReadOnly:      true,
		Idempotent:    true,
		Validator:     schema.MustCompile(schema.For[NoInput]()),
		OutputSchema:  publishedSchema(schema.For[HealthOutput]()),
		SuccessSchema: schema.For[HealthOutput](),
	}
	return h.reg.Set(registry.HostOwner, []*registry.Tool{ping, health})
}

func (h *Host) callSystemTool(ctx context.Context, c *pipeline.Call) *pipeline.Outcome {
	// The host runs these handlers, so it checks their arguments, as the
	// SDK does for a plugin's (docs/decisions.md D34).
	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if e := rawjson.Check(args, rawjson.DefaultMaxDepth); e != nil {
		return pipeline.Fail(e)
	}
	if e := c.Tool.Validate(args); e != nil {
		return pipeline.Fail(e)
	}
	var v any
	switch c.Name {
	case "server_ping":
		v = PingOutput{OK: true, Timestamp: Timestamp(time.Now())}
	case "server_health":
		v = h.Health(ctx)
	default:
		return pipeline.Fail(errs.Newf(404, errs.NotFound, "unknown host tool %q", c.Name))
	}
	raw, err := sdk.MarshalJSON(v)
	if err != nil {
		return pipeline.Fail(errs.New(500, errs.Internal, err.Error()))
	}
	return &pipeline.Outcome{Output: raw, Status: 200}
}

// Health gathers the health report, asking every running plugin in
// parallel. Mode, toolsets and the tool count are the calling session's.
func (h *Host) Health(ctx context.Context) HealthOutput {
	sess := h.sessionOf(ctx)
	visible := 0
	for _, t := range h.reg.List() {
		if session.Visible(sess, t) {
			visible++
		}
	}
	out := HealthOutput{
		Status: "ok", Mode: sess.Mode, UptimeMs: time.Since(h.started).Milliseconds(),
		Middleware: MiddlewareInfo{Stages: h.pipe.Stages()},
		Tools:      ToolsInfo{Registered: visible},
		Version:    h.opts.Version, Timestamp: Timestamp(time.Now()),
		Plugins: []PluginHealth{}, Problems: []string{}, Toolsets: []string{},
	}
	for _, ts := range config.BuiltinToolsets {
		if sess.Serves(ts) {
			out.Toolsets = append(out.Toolsets, ts)
		}
	}
	if own := session.From(ctx, nil); own != nil {
		// What is wrong in the calling session's own settings (a
		// CAIRN_TOOLSETS with nothing valid serves the system tools only,
		// docs/decisions.md D42): the agent that can call little else
		// learns why here.
		for _, w := range own.Warnings {
			out.Problems = append(out.Problems, "this session: "+w)
		}
	}
	out.Calls, _ = h.metrics.Snapshot()
	out.Events.Published, out.Events.Dropped, out.Events.Subscribers = h.bus.Stats()
	if c := h.bus.Cluster(); c != nil {
		st := c.Stats()
		out.Cluster = &st
		if !st.Connected {
			out.Problems = append(out.Problems, "cluster: not following the other servers' events: "+st.LastError)
		}
	}

	plugins := h.Plugins()
	lines := make([]PluginHealth, len(plugins))
	details := make([]map[string]json.RawMessage, len(plugins))
	var wg sync.WaitGroup
	for i, p := range plugins {
		wg.Add(1)
		go func(i int, p *supervisor.Plugin) {
			defer wg.Done()
			st := p.Status()
			line := PluginHealth{Name: st.Name, Version: st.Version, Source: st.Source, State: string(st.State), Restarts: st.Restarts, Tools: st.Tools, PID: st.PID, SHA256: st.SHA256, Status: "degraded", Message: st.LastError, LastExit: st.LastExit, NextAttempt: st.NextAttempt}
			// An opening plugin answers too: its health names the step
			// it is on (docs/decisions.md D34).
			if st.State.Started() {
				if hr, err := p.Health(ctx); err != nil {
					line.Message = "health check failed: " + err.Error()
				} else {
					line.Status, line.Message = hr.Status, hr.Message
					if len(hr.Details) > 0 {
						var d map[string]json.RawMessage
						if json.Unmarshal(hr.Details, &d) == nil {
							details[i] = d
						}
					}
				}
			}
			lines[i] = line
		}(i, p)
	}
	wg.Wait()
	out.Plugins = lines
	for i, l := range lines {
		if l.Status != "ok" {
			out.Status = "degraded"
		}
		d := details[i]
		for k, v := range d {
			if k == "problems" {
				continue
			}
			if out.Plugins[i].Details == nil {
				out.Plugins[i].Details = map[string]json.RawMessage{}
			}
			out.Plugins[i].Details[k] = v
		}
		if raw, ok := d["db"]; ok && !out.DB.Open {
			_ = json.Unmarshal(raw, &out.DB)
		}
		if raw, ok := d["problems"]; ok {
			var probs []string
			if json.Unmarshal(raw, &probs) == nil {
				for _, pr := range probs {
					out.Problems = append(out.Problems, l.Name+": "+pr)
				}
			}
		}
	}
	if u := h.Untrusted(); len(u) > 0 {
		out.Untrusted = u
		out.Status = "degraded"
		for _, p := range u {
			out.Problems = append(out.Problems, p.Name+": not started, not trusted: "+p.Reason+"; to run it: "+p.Command)
		}
	}
	for name, msg := range h.Problems() {
		out.Problems = append(out.Problems, name+": "+msg)
		out.Status = "degraded"
	}
	sort.Strings(out.Problems)
	if len(out.Problems) > 0 {
		out.Status = "degraded"
	}
	return out
}
