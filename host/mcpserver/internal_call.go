package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// CallInternal runs a tool of the internal toolset for one of the host's
// own features (the dashboard's proof-bundle download), straight to the
// plugin as the authenticator's calls go: no session lists or calls these
// tools, so the pipeline's filter would refuse them. Any other tool is
// refused here: this is no way around a session's toolsets.
func (srv *Server) CallInternal(ctx context.Context, name string, args json.RawMessage, caller seam.Caller) *seam.Result {
	t, ok := srv.catalog.Get(name)
	if !ok || t.Toolset != sdk.InternalToolset {
		return pipeline.Fail(errs.NotFoundf(errs.NotFound, "name", "no internal tool named %q", name))
	}
	return srv.Dispatch(ctx, &pipeline.Call{Name: name, Tool: t, Args: args, Caller: caller})
}
