package tasks

import "github.com/cairn-mcp/cairn/sdk/idempotency"

// Call is who makes a call and the session context the domain needs; the
// wiring layer fills it from the SDK's caller and idempotency key.
type Call struct {
	// Actor is created_by / updated_by and a claim's holder (D4).
	Actor string
	// Project is the session's active project (D21, D24). It counts as
	// registered: a write into it registers it in the same transaction.
	Project string
	// Idem is the call's idempotency (docs/decisions.md D42): a write
	// under a key that named this call returns the recorded output and
	// writes nothing; one that named another call is a 409. Zero: none.
	Idem idempotency.Key
	// TraceID is the call's trace (empty: untraced); the task-event
	// records its writes append keep it (docs/decisions.md D38).
	TraceID string
}

// pending is an event to publish once its transaction has committed.
type pending struct {
	typ  string
	data map[string]any
}

func (s *Service) publishAll(evs []pending) {
	for _, e := range evs {
		s.publish(e.typ, e.data)
	}
}
