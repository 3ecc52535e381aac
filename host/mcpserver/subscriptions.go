package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk"
)

// listenStream is a session that tags the notifications of its open
// subscriptions/listen request with its id: a byte-stream session
// (host/transport/stdio).
type listenStream interface{ Listen(id any) }

// hookSubscriptions records subscriptions as mcp-go serves the requests
// that make them.
func (srv *Server) hookSubscriptions(hooks *server.Hooks) {
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			srv.subs.Add(sess, req.Params.URI, nil)
		}
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			srv.subs.Remove(sess, req.Params.URI)
		}
	})
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		uris := req.Params.Notifications.ResourceSubscriptions
		for _, uri := range uris {
			srv.subs.Add(sess, uri, id)
		}
		if c, ok := sess.(listenStream); ok {
			c.Listen(id)
		}
		// The request's context ends when the client cancels it or goes.
		context.AfterFunc(ctx, func() {
			for _, uri := range uris {
				srv.subs.Remove(sess, uri)
			}
			if c, ok := sess.(listenStream); ok {
				c.Listen(nil)
			}
		})
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { srv.subs.Forget(sess) })
}

// watchResourceUpdates turns plugins' sdk.EventResourceUpdated events into
// notifications/resources/updated for the subscribed sessions.
func (srv *Server) watchResourceUpdates() (unsubscribe func()) {
	return srv.bus.Subscribe("host.subscriptions", sdk.EventResourceUpdated, func(ev events.Event) {
		var data struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(ev.Data, &data) != nil || data.URI == "" {
			return
		}
		for sess, listenID := range srv.subs.Subscribers(data.URI) {
			n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: mcp.MethodNotificationResourceUpdated,
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": data.URI}},
			}}
			if listenID != nil {
				n.Params.Meta = map[string]any{mcp.MetaKeySubscriptionID: listenID}
			}
			select {
			case sess.NotificationChannel() <- n:
			default:
				srv.log.Warn("resource update not delivered: the session's queue is full", "session", sess.SessionID(), "uri", data.URI)
			}
		}
	})
}

// watchProtocolEvents starts the bus watches behind live prompts and
// resource subscriptions; the function it returns ends them (once).
func (srv *Server) watchProtocolEvents() (unwatch func()) {
	stopUpdates, stopPrompts := srv.watchResourceUpdates(), srv.watchPromptChanges()
	return sync.OnceFunc(func() {
		stopUpdates()
		stopPrompts()
	})
}
