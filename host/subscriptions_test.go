package host

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestSubscriptions(t *testing.T) {
	s := newSubscriptions()
	a := &connSession{id: "a", notifications: make(chan mcp.JSONRPCNotification, 1)}
	b := &connSession{id: "b", notifications: make(chan mcp.JSONRPCNotification, 1)}
	s.add(a, "cairn://tasks/T-1", nil)
	s.add(b, "cairn://tasks/T-1", float64(7))
	s.add(b, "cairn://trail/T-1", float64(7))
	got := s.subscribers("cairn://tasks/T-1")
	if len(got) != 2 || got[a] != nil || got[b] != float64(7) {
		t.Fatalf("subscribers = %v; want a (subscribe) and b (listen 7)", got)
	}
	s.remove(a, "cairn://tasks/T-1")
	if got := s.subscribers("cairn://tasks/T-1"); len(got) != 1 {
		t.Fatalf("after unsubscribe: %v", got)
	}
	s.forget(b)
	if got := s.subscribers("cairn://trail/T-1"); len(got) != 0 {
		t.Fatalf("after the session ended: %v", got)
	}
	if len(s.bySession) != 0 {
		t.Fatalf("sessions left behind: %v", s.bySession)
	}
}

// A 2026-07-28 session hears broadcasts only through an open listen
// request, and what it hears there carries that request's id.
func TestConnSessionListenStream(t *testing.T) {
	s := &connSession{id: "c"}
	if _, active := s.SubscriptionFilter(); active {
		t.Fatal("a 2025-11-25 session is filtered")
	}
	s.modern.Store(true)
	if f, active := s.SubscriptionFilter(); !active || !f.IsEmpty() {
		t.Fatal("a 2026-07-28 session without listen is not filtered to nothing")
	}
	n := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: mcp.MethodNotificationToolsListChanged}}
	if got := s.tagged(n); got.Params.Meta != nil {
		t.Fatalf("tagged without a listen request: %v", got.Params.Meta)
	}
	s.listen(float64(3))
	if got := s.tagged(n); got.Params.Meta[mcp.MetaKeySubscriptionID] != float64(3) {
		t.Fatalf("list change on the stream not tagged: %v", got.Params.Meta)
	}
	progress := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: "notifications/progress"}}
	if got := s.tagged(progress); got.Params.Meta != nil {
		t.Fatalf("a request's progress tagged as the stream's: %v", got.Params.Meta)
	}
	s.listen(nil)
	if got := s.tagged(n); got.Params.Meta != nil {
		t.Fatalf("tagged after the listen request ended: %v", got.Params.Meta)
	}
}
