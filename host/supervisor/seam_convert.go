// The host's side of the seam converts only the two types whose host
// form carries more than crosses to a plugin: a call (pipeline.Call, with
// its tool entry and its callbacks) and a described tool (registry.Tool,
// with its compiled schema). Every other type of the boundary is the
// seam's own (sdk/seam), so it needs no converting; the one converter to
// the protocol is inside the SDK (docs/decisions.md D34).

package supervisor

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// callToSeam is call c as it goes to its plugin, with the channels of
// opts: the client channel the plugin may ask the caller's client through,
// and the tool channel it may call other areas' tools through (0: none). The
// call wants progress when c forwards it, and log lines at c.LogLevel
// when c forwards those.
func callToSeam(c *pipeline.Call, opts CallOptions) seam.Call {
	out := seam.Call{
		Tool: c.Name, Args: c.Args, Caller: c.Caller, RequestID: c.RequestID,
		IdempotencyKey: c.IdempotencyKey, IdempotencyClient: c.IdempotencyClient, Replay: c.Replay,
		WantsProgress: c.Progress != nil, ClientChannel: opts.ClientChannel, ToolChannel: opts.ToolChannel, Task: c.Task,
		TraceParent: c.TraceParent, TraceState: c.TraceState,
	}
	if c.Log != nil {
		out.LogLevel = c.LogLevel
	}
	return out
}

// progressFunc adapts the call's progress callback to the seam's
// progress reports; nil when the call forwards no progress.
func progressFunc(c *pipeline.Call) func(seam.Progress) {
	if c.Progress == nil {
		return nil
	}
	return func(p seam.Progress) { c.Progress(p.Progress, p.Total, p.Message) }
}

// logFunc adapts the call's log callback to the seam's log lines; nil
// when the call forwards no log lines.
func logFunc(c *pipeline.Call) func(seam.LogLine) {
	if c.Log == nil {
		return nil
	}
	return func(l seam.LogLine) { c.Log(l.Level, l.Logger, l.Data) }
}

// toolFromSeam is a described tool as the registry's. With compile, its
// input schema is compiled now (else on the tool's first call,
// registry.Tool.Validate) and its output schema checked. A tool without an
// input schema takes any object; one without a toolset is in "default".
func toolFromSeam(t seam.Tool, compile bool) (*registry.Tool, error) {
	in := t.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	var validator *schema.Validator
	if compile {
		var err error
		if validator, err = schema.Compile(in); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		if len(t.OutputSchema) > 0 {
			if _, err := schema.Compile(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("output schema: %w", err)
			}
		}
	}
	out, err := schema.Published(t.OutputSchema)
	if err != nil {
		return nil, err
	}
	rt := &registry.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, Toolset: t.Toolset,
		InputSchema: in, OutputSchema: out, SuccessSchema: t.OutputSchema,
		HonoursIdempotency: t.HonoursIdempotency, TaskSupport: t.TaskSupport, CallsTools: t.CallsTools, Validator: validator,
	}
	if a := t.Annotations; a != nil {
		rt.ReadOnly = a.ReadOnly
		rt.Destructive = a.Destructive
		rt.Idempotent = a.Idempotent
		rt.OpenWorld = a.OpenWorld
		if rt.Title == "" {
			rt.Title = a.Title
		}
	}
	if rt.Toolset == "" {
		rt.Toolset = "default"
	}
	return rt, nil
}
