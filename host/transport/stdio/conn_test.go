package stdio

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A 2026-07-28 session hears broadcasts only through an open listen
// request, and what it hears there carries that request's id.
func TestConnSessionListenStream(t *testing.T) {
	t.Parallel()
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
	s.Listen(float64(3))
	if got := s.tagged(n); got.Params.Meta[mcp.MetaKeySubscriptionID] != float64(3) {
		t.Fatalf("list change on the stream not tagged: %v", got.Params.Meta)
	}
	progress := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: "notifications/progress"}}
	if got := s.tagged(progress); got.Params.Meta != nil {
		t.Fatalf("a request's progress tagged as the stream's: %v", got.Params.Meta)
	}
	s.Listen(nil)
	if got := s.tagged(n); got.Params.Meta != nil {
		t.Fatalf("tagged after the listen request ended: %v", got.Params.Meta)
	}
}
