package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// AuthenticateTool is the internal tool an area declares to check API keys
// for the HTTP transport (the admin area provides it).
const AuthenticateTool = "admin_key_authenticate"

// PluginAuthenticator checks HTTP callers' keys by calling the area that
// owns them (docs/decisions.md D22: the host never opens an area's store). Each
// request is counted against the key's rate limits, so nothing is cached.
// It fails when no loaded plugin declares the authenticator.
func (srv *Server) PluginAuthenticator() (httpserve.Authenticator, error) {
	t, ok := srv.catalog.Get(AuthenticateTool)
	if !ok || t.Toolset != sdk.InternalToolset {
		return nil, errs.New(400, errs.ConfigInvalid, "--http requires API keys, but no loaded plugin checks them (the admin area provides "+AuthenticateTool+"); pass --no-auth to serve a loopback address without keys")
	}
	return pluginAuth{srv: srv}, nil
}

type pluginAuth struct{ srv *Server }

func (a pluginAuth) Authenticate(ctx context.Context, key string) (httpserve.Principal, error) {
	t, ok := a.srv.catalog.Get(AuthenticateTool)
	if !ok {
		return httpserve.Principal{}, errs.New(503, errs.PluginUnavailable, "the plugin that checks API keys is not running; try again shortly")
	}
	args, _ := json.Marshal(map[string]string{"key": key})
	// Straight to the plugin: the call is the host's own, as the operator.
	out := a.srv.Dispatch(ctx, &pipeline.Call{Name: AuthenticateTool, Tool: t, Args: args, Caller: seam.Caller{ID: "cairn-host", Source: "host"}})
	if out.Err != nil {
		return httpserve.Principal{}, out.Err
	}
	var p struct {
		UserID string   `json:"user_id"`
		KeyID  string   `json:"key_id"`
		Scopes []string `json:"scopes"`
	}
	if err := json.Unmarshal(out.Output, &p); err != nil || p.UserID == "" {
		return httpserve.Principal{}, errs.New(502, errs.Internal, "the authenticator answered without a user")
	}
	return httpserve.Principal{UserID: p.UserID, KeyID: p.KeyID, Source: httpserve.SourceAPIKey, Scopes: p.Scopes}, nil
}

// principalSource is the seam.Caller Source of an HTTP caller: how it
// proved who it is, an API key or an OAuth token (docs/decisions.md D44).
func principalSource(p httpserve.Principal) string {
	if p.Source == "" {
		return httpserve.SourceAPIKey
	}
	return p.Source
}
