package host

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk"
)

// subscriptions records which sessions asked to hear of which resource
// URIs: with resources/subscribe (2025-11-25, until resources/unsubscribe
// or the session ends) or in a subscriptions/listen request (2026-07-28,
// for as long as that request stays open). Plugins say a resource changed
// with sdk.EventResourceUpdated; the host tells the subscribers.
type subscriptions struct {
	mu sync.Mutex
	// bySession maps a session to its URIs, each with the id of the
	// subscriptions/listen request carrying it (nil for resources/subscribe).
	bySession map[server.ClientSession]map[string]any
}

func newSubscriptions() *subscriptions {
	return &subscriptions{bySession: map[server.ClientSession]map[string]any{}}
}

func (s *subscriptions) add(sess server.ClientSession, uri string, listenID any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.bySession[sess]
	if m == nil {
		m = map[string]any{}
		s.bySession[sess] = m
	}
	m[uri] = listenID
}

func (s *subscriptions) remove(sess server.ClientSession, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bySession[sess], uri)
	if len(s.bySession[sess]) == 0 {
		delete(s.bySession, sess)
	}
}

// forget drops every subscription of a session that ended.
func (s *subscriptions) forget(sess server.ClientSession) {
	s.mu.Lock()
	delete(s.bySession, sess)
	s.mu.Unlock()
}

// subscribers lists the sessions subscribed to uri with their listen ids.
func (s *subscriptions) subscribers(uri string) map[server.ClientSession]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[server.ClientSession]any{}
	for sess, m := range s.bySession {
		if id, ok := m[uri]; ok {
			out[sess] = id
		}
	}
	return out
}

// listenStream is a session that tags the notifications of its open
// subscriptions/listen request with its id: a byte-stream session
// (host/transport/stdio).
type listenStream interface{ Listen(id any) }

// hookSubscriptions records subscriptions as mcp-go serves the requests
// that make them.
func (h *Host) hookSubscriptions(hooks *server.Hooks) {
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			h.subs.add(sess, req.Params.URI, nil)
		}
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			h.subs.remove(sess, req.Params.URI)
		}
	})
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		uris := req.Params.Notifications.ResourceSubscriptions
		for _, uri := range uris {
			h.subs.add(sess, uri, id)
		}
		if c, ok := sess.(listenStream); ok {
			c.Listen(id)
		}
		// The request's context ends when the client cancels it or goes.
		context.AfterFunc(ctx, func() {
			for _, uri := range uris {
				h.subs.remove(sess, uri)
			}
			if c, ok := sess.(listenStream); ok {
				c.Listen(nil)
			}
		})
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { h.subs.forget(sess) })
}

// watchResourceUpdates turns plugins' sdk.EventResourceUpdated events into
// notifications/resources/updated for the subscribed sessions.
func (h *Host) watchResourceUpdates() (unsubscribe func()) {
	return h.bus.Subscribe("host.subscriptions", sdk.EventResourceUpdated, func(ev events.Event) {
		var data struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(ev.Data, &data) != nil || data.URI == "" {
			return
		}
		for sess, listenID := range h.subs.subscribers(data.URI) {
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
				h.log.Warn("resource update not delivered: the session's queue is full", "session", sess.SessionID(), "uri", data.URI)
			}
		}
	})
}

// watchProtocolEvents starts the bus watches behind live prompts and
// resource subscriptions; the function it returns ends them (once).
func (h *Host) watchProtocolEvents() (unwatch func()) {
	stopUpdates, stopPrompts := h.watchResourceUpdates(), h.watchPromptChanges()
	return sync.OnceFunc(func() {
		stopUpdates()
		stopPrompts()
	})
}
