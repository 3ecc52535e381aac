package stdio

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// trackCall makes the tool call with this JSON-RPC id cancellable by a
// notifications/cancelled naming it; release forgets it. No two calls of a
// session hold one id at once: the second is refused (jsonrpc.InFlight).
func (s *connSession) trackCall(ctx context.Context, id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key, ok := rpcid.Key(id)
	if !ok {
		return ctx, cancel
	}
	// A pointer, so the entry can be compared when it is forgotten.
	entry := &cancel
	s.calls.Store(key, entry)
	return ctx, func() {
		s.calls.CompareAndDelete(key, entry)
		cancel()
	}
}

var requestIDKey = []string{"requestId"}

// cancelCall cancels the call a notifications/cancelled line names.
func (s *connSession) cancelCall(line []byte) {
	ps, pe, ok := (&rawjson.Scanner{B: line}).Member("params")
	if !ok {
		return
	}
	spans := make([][2]int, 1)
	if !(&rawjson.Scanner{B: line[:pe], I: ps}).Members(requestIDKey, spans) || spans[0][1] == 0 {
		return
	}
	key, ok := rpcid.Key(line[spans[0][0]:spans[0][1]])
	if !ok {
		return
	}
	if entry, found := s.calls.Load(key); found {
		(*entry.(*context.CancelFunc))()
	}
}
