package clientsession

import (
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// Subscriptions records which sessions asked to hear of which resource
// URIs: with resources/subscribe (2025-11-25, until resources/unsubscribe
// or the session ends) or in a subscriptions/listen request (2026-07-28,
// for as long as that request stays open). Plugins say a resource changed
// with sdk.EventResourceUpdated; the host tells the subscribers.
type Subscriptions struct {
	mu sync.Mutex
	// bySession maps a session to its URIs, each with the id of the
	// subscriptions/listen request carrying it (nil for resources/subscribe).
	bySession map[server.ClientSession]map[string]any
}

// NewSubscriptions returns a table with no subscriptions.
func NewSubscriptions() *Subscriptions {
	return &Subscriptions{bySession: map[server.ClientSession]map[string]any{}}
}

// Add subscribes sess to uri; listenID is the subscriptions/listen
// request carrying it, nil for resources/subscribe.
func (s *Subscriptions) Add(sess server.ClientSession, uri string, listenID any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.bySession[sess]
	if m == nil {
		m = map[string]any{}
		s.bySession[sess] = m
	}
	m[uri] = listenID
}

// Remove ends one subscription.
func (s *Subscriptions) Remove(sess server.ClientSession, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bySession[sess], uri)
	if len(s.bySession[sess]) == 0 {
		delete(s.bySession, sess)
	}
}

// Forget drops every subscription of a session that ended.
func (s *Subscriptions) Forget(sess server.ClientSession) {
	s.mu.Lock()
	delete(s.bySession, sess)
	s.mu.Unlock()
}

// Subscribers lists the sessions subscribed to uri with their listen ids.
func (s *Subscriptions) Subscribers(uri string) map[server.ClientSession]any {
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
