// Package pipeline runs every tool call through named middleware stages
// (recover, identify, authorize, filter, audit, metrics, dispatch) that
// server_health reports.
package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// Call is one tool call travelling through the stages. Its caller, its
// task parameters and its result (seam.Result) are the seam's types, the
// ones a plugin receives and answers (docs/decisions.md D34).
type Call struct {
	Name      string
	Tool      *registry.Tool
	Args      json.RawMessage
	Caller    seam.Caller
	RequestID string
	// IdempotencyKey identifies the call across a daemon restart; Replay
	// marks a call that may already have run. IdempotencyClient is true
	// when the key is the client's own, honoured 24 hours rather than the
	// short hold of a key the host derived (docs/decisions.md D42).
	IdempotencyKey    string
	IdempotencyClient bool
	Replay            bool
	// Progress, when non-nil, forwards progress to the client.
	Progress func(progress, total float64, message string)
	// LogLevel is the lowest MCP log level the client wants to hear for
	// this call (empty: none); Log sends it a line at that level or above.
	LogLevel string
	Log      func(level, logger string, data json.RawMessage)
	// Task, when set, asks the plugin to run the call as a task
	// (docs/decisions.md D39): the outcome carries the task, not the
	// tool's result.
	Task *seam.TaskParams
	// TraceParent and TraceState are the W3C trace context the plugin's
	// span for the call hangs under (docs/decisions.md D38): the client's
	// when the host does not export traces, else the dispatch stage's
	// span. Empty for an untraced call.
	TraceParent, TraceState string
}

// Fail builds an error outcome.
func Fail(e *errs.Error) *seam.Result {
	if e.Status == 0 {
		e.Status = 500
	}
	return &seam.Result{Err: e, Status: e.Status}
}

// Handler handles a call.
type Handler func(ctx context.Context, c *Call) *seam.Result

// Stage is one named middleware.
type Stage struct {
	Name string
	Wrap func(next Handler) Handler
}

// Pipeline is a fixed chain of stages ending in a dispatch handler.
type Pipeline struct {
	names []string
	h     Handler
}

// New builds a pipeline; stages run in the order given, dispatch last.
// When the process exports traces (telemetry.On at the time of New), each
// stage runs in a span of its own (traced.go); otherwise nothing is added
// to a call's path.
func New(dispatch Handler, stages ...Stage) *Pipeline {
	on := telemetry.On()
	h := dispatch
	if on {
		h = tracedDispatch(dispatch)
	}
	for i := len(stages) - 1; i >= 0; i-- {
		h = stages[i].Wrap(h)
		if on {
			h = traced(stages[i].Name, h)
		}
	}
	names := make([]string, 0, len(stages)+1)
	for _, s := range stages {
		names = append(names, s.Name)
	}
	return &Pipeline{names: append(names, "dispatch"), h: h}
}

// Stages returns the stage names in order.
func (p *Pipeline) Stages() []string { return append([]string(nil), p.names...) }

// Run sends a call through the pipeline.
func (p *Pipeline) Run(ctx context.Context, c *Call) *seam.Result { return p.h(ctx, c) }

// Recover turns a panic anywhere downstream into a 500 outcome.
func Recover(log hclog.Logger) Stage {
	return Stage{Name: "recover", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) (out *seam.Result) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("tool call panicked in the host", "tool", c.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					out = Fail(errs.New(500, errs.Internal, "the host failed while handling this call; it logged the details"))
				}
			}()
			return next(ctx, c)
		}
	}}
}

// Identify fills the caller identity (D4). An identity the transport
// established wins: a relayed session's own CAIRN_AGENT_ID, or over HTTP the
// API key's user, or a person acting from the dashboard. Then agentID (the host's CAIRN_AGENT_ID), then the
// client's name, then "unknown".
func Identify(agentID string) Stage {
	return Stage{Name: "identify", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) *seam.Result {
			switch {
			case c.Caller.ID != "" && c.Caller.Source != "" && c.Caller.Source != "client" && c.Caller.Source != "unknown":
			case agentID != "":
				c.Caller.ID, c.Caller.Source = agentID, "env"
			case c.Caller.ClientName != "":
				c.Caller.ID, c.Caller.Source = c.Caller.ClientName, "client"
			default:
				c.Caller.ID, c.Caller.Source = "unknown", "unknown"
			}
			return next(ctx, c)
		}
	}}
}

// Filter refuses tools the calling session's mode or toolsets hide: refuse
// returns the typed refusal (403 naming the mode or toolset), or nil. Hidden
// tools are not listed either; this stage guards every other path to them.
func Filter(refuse func(context.Context, *registry.Tool) *errs.Error) Stage {
	return Stage{Name: "filter", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) *seam.Result {
			if c.Tool == nil {
				return Fail(errs.Newf(404, errs.NotFound, "no tool named %q", c.Name))
			}
			if e := refuse(ctx, c.Tool); e != nil {
				return Fail(e)
			}
			return next(ctx, c)
		}
	}}
}

// Audit logs each call: tool, caller, outcome, duration. Arguments are not
// logged: they may hold secrets.
func Audit(log hclog.Logger) Stage {
	return Stage{Name: "audit", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) *seam.Result {
			start := time.Now()
			out := next(ctx, c)
			kv := []any{"tool", c.Name, "caller", c.Caller.ID, "session", c.Caller.ClientSessionID, "status", out.Status, "duration_ms", time.Since(start).Milliseconds()}
			if out.Err != nil {
				kv = append(kv, "code", out.Err.Code)
				if out.Status >= 500 {
					log.Warn("tool call failed", append(kv, "message", out.Err.Message)...)
					return out
				}
			}
			log.Debug("tool call", kv...)
			return out
		}
	}}
}

// Metrics counts calls and latencies per tool.
type Metrics struct {
	mu    sync.Mutex
	tools map[string]*toolStats
}

type toolStats struct {
	Calls   uint64
	Errors  uint64
	TotalNs int64
	MaxNs   int64
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{tools: map[string]*toolStats{}} }

// Stage returns the metrics stage.
func (m *Metrics) Stage() Stage {
	return Stage{Name: "metrics", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) *seam.Result {
			start := time.Now()
			out := next(ctx, c)
			d := time.Since(start).Nanoseconds()
			m.mu.Lock()
			s := m.tools[c.Name]
			if s == nil {
				s = &toolStats{}
				m.tools[c.Name] = s
			}
			s.Calls++
			if out.Err != nil {
				s.Errors++
			}
			s.TotalNs += d
			if d > s.MaxNs {
				s.MaxNs = d
			}
			m.mu.Unlock()
			return out
		}
	}}
}

// ToolMetrics is a snapshot of one tool's counters.
type ToolMetrics struct {
	Tool   string  `json:"tool"`
	Calls  uint64  `json:"calls"`
	Errors uint64  `json:"errors"`
	MeanMs float64 `json:"mean_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Snapshot returns per-tool counters sorted by tool name.
func (m *Metrics) Snapshot() (calls uint64, perTool []ToolMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, s := range m.tools {
		calls += s.Calls
		perTool = append(perTool, ToolMetrics{Tool: name, Calls: s.Calls, Errors: s.Errors,
			MeanMs: float64(s.TotalNs) / float64(s.Calls) / 1e6, MaxMs: float64(s.MaxNs) / 1e6})
	}
	sort.Slice(perTool, func(i, j int) bool { return perTool[i].Tool < perTool[j].Tool })
	return calls, perTool
}
