package pipeline

import (
	"context"
	"slices"

	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// RequiredScope is the API-key scope a tool needs (docs/decisions.md D22): admin
// for the admin toolset, read for read-only tools, write for the rest. The
// host's own tools need none.
func RequiredScope(t *registry.Tool) string {
	switch {
	case t.Owner == registry.HostOwner:
		return ""
	case t.Toolset == "admin":
		return "admin"
	case t.ReadOnly:
		return "read"
	default:
		return "write"
	}
}

// Authorize refuses a call whose principal lacks the tool's scope. The
// local operator (every caller that did not authenticate with an API key)
// holds every right; workspace roles inside the admin area are the area's
// to enforce.
func Authorize() Stage {
	return Stage{Name: "authorize", Wrap: func(next Handler) Handler {
		return func(ctx context.Context, c *Call) *seam.Result {
			if c.Caller.Source == "api_key" && c.Tool != nil {
				if need := RequiredScope(c.Tool); need != "" && !slices.Contains(c.Caller.Scopes, need) {
					e := errs.Newf(403, errs.Forbidden, "tool %s needs an API key with the %q scope; this key has %v (create one with `cairn admin keys create --scope %s`)", c.Name, need, c.Caller.Scopes, need)
					e.Details["required"] = need
					return Fail(e)
				}
			}
			return next(ctx, c)
		}
	}}
}
