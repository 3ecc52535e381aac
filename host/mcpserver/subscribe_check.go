package mcpserver

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// refuseSubscription answers a 2025-11-25 resources/subscribe whose URI no
// plugin serves, or that its plugin says does not exist, with the JSON-RPC
// error resource not found (-32002): mcp-go would accept any URI, and the
// client would wait for updates that never come. It returns false for any
// other message, which goes on to mcp-go. Every transport calls it before
// dispatching.
func (srv *Server) refuseSubscription(ctx context.Context, body []byte) (mcp.JSONRPCError, bool) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != string(mcp.MethodResourcesSubscribe) || len(req.ID) == 0 || req.Params.URI == "" {
		return mcp.JSONRPCError{}, false
	}
	if v, _ := req.Params.Meta[mcp.MetaKeyProtocolVersion].(string); mcp.IsModernProtocol(v) {
		return mcp.JSONRPCError{}, false // 2026-07-28 subscribes with subscriptions/listen
	}
	missing, why := srv.resourceMissing(ctx, req.Params.URI)
	if !missing {
		return mcp.JSONRPCError{}, false
	}
	var id any
	_ = json.Unmarshal(req.ID, &id)
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
		Error: mcp.NewJSONRPCErrorDetails(mcp.RESOURCE_NOT_FOUND, why, map[string]any{"uri": req.Params.URI})}, true
}

// resourceMissing reports whether uri names no resource: no plugin lists it
// or has a template matching it, or reading it answers not found.
func (srv *Server) resourceMissing(ctx context.Context, uri string) (bool, string) {
	srv.mu.Lock()
	var read server.ResourceTemplateHandlerFunc
	for _, l := range srv.resources {
		for _, r := range l {
			if r.Resource.URI == uri {
				srv.mu.Unlock()
				return false, ""
			}
		}
	}
	for _, l := range srv.templates {
		for _, t := range l {
			if read == nil && t.Template.URITemplate != nil && t.Template.URITemplate.Regexp().MatchString(uri) {
				read = t.Handler
			}
		}
	}
	srv.mu.Unlock()
	if read == nil {
		return true, "no resource " + uri + ": it matches no resource or template of resources/list and resources/templates/list"
	}
	// A template matches: whether the resource exists is its plugin's to
	// say. Any answer but not found lets the subscription stand.
	_, err := read(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if errors.Is(err, server.ErrResourceNotFound) {
		return true, "no resource " + uri + ": " + err.Error()
	}
	return false, ""
}
