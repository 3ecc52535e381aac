package mcpserver

import (
	"context"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Dispatch is the pipeline's last stage: the host's own tools run here,
// everything else goes to its plugin.
func (srv *Server) Dispatch(ctx context.Context, c *pipeline.Call) *seam.Result {
	if c.Tool.Owner == registry.HostOwner {
		return srv.system.Call(ctx, c)
	}
	p := srv.fleet.Process(c.Tool.Owner)
	if p == nil {
		return pipeline.Fail(errs.Newf(503, errs.PluginUnavailable, "plugin %s is not running", c.Tool.Owner))
	}
	if c.Replay && !c.Tool.ReadOnly && !c.Tool.HonoursIdempotency {
		// The call may have run before the daemon died; running it again
		// could apply it twice, and the tool cannot tell.
		// The caller is not told to retry: it might apply the call twice
		// (docs/decisions.md D32).
		e := errs.Newf(503, errs.Unavailable, "the cairn daemon restarted while %s was running; it may or may not have taken effect, and the tool cannot tell a replay apart: check its effect before calling it again", c.Name)
		e.Details["applied"] = "unknown"
		e.Details["retryable"] = false
		return pipeline.Fail(e)
	}
	channel, closeChannel := srv.asks.open(ctx, c.Tool.Owner)
	defer closeChannel()
	retrySafe := c.Tool.ReadOnly || c.Tool.Idempotent || (c.Tool.HonoursIdempotency && c.IdempotencyKey != "")
	opts := supervisor.CallOptions{ClientChannel: channel, RetrySafe: retrySafe}
	if c.Tool.CallsTools && c.Task == nil {
		var closeTools func()
		opts.ToolChannel, closeTools = srv.callbacks.open(ctx, c.Tool.Owner, c)
		defer closeTools()
	}
	out := p.Call(ctx, c, opts)
	if out.Err != nil || out.Task != nil {
		return out // a task's output is checked when tasks/result fetches it
	}
	checked, e := checkOutput(c.Name, out.Output)
	if e != nil {
		return pipeline.Fail(e)
	}
	out.Output = checked
	return out
}
