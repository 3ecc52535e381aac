package clientsession

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestSubscriptions(t *testing.T) {
	t.Parallel()
	s := NewSubscriptions()
	a, b := &testSession{id: "a"}, &testSession{id: "b"}
	s.Add(a, "cairn://tasks/T-1", nil)
	s.Add(b, "cairn://tasks/T-1", float64(7))
	s.Add(b, "cairn://trail/T-1", float64(7))
	got := s.Subscribers("cairn://tasks/T-1")
	if len(got) != 2 || got[a] != nil || got[b] != float64(7) {
		t.Fatalf("subscribers = %v; want a (subscribe) and b (listen 7)", got)
	}
	s.Remove(a, "cairn://tasks/T-1")
	if got := s.Subscribers("cairn://tasks/T-1"); len(got) != 1 {
		t.Fatalf("after unsubscribe: %v", got)
	}
	s.Forget(b)
	if got := s.Subscribers("cairn://trail/T-1"); len(got) != 0 {
		t.Fatalf("after the session ended: %v", got)
	}
	if len(s.bySession) != 0 {
		t.Fatalf("sessions left behind: %v", s.bySession)
	}
}

// testSession is a server.ClientSession with nothing but an id.
type testSession struct{ id string }

func (s *testSession) SessionID() string                                   { return s.id }
func (s *testSession) Initialize()                                         {}
func (s *testSession) Initialized() bool                                   { return true }
func (s *testSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
