package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestInFlightHoldsAnIDUntilReleased: an id is refused while held, with
// -32600 naming it and carrying it back; 7 and "7" are two ids; a release
// called twice never frees the id a later request holds.
func TestInFlightHoldsAnIDUntilReleased(t *testing.T) {
	t.Parallel()
	var f InFlight
	first, _, ok := f.Enter(json.RawMessage(`7`))
	if !ok {
		t.Fatal("a free id was refused")
	}
	_, refusal, ok := f.Enter(json.RawMessage(` 7 `))
	if ok {
		t.Fatal("an id in flight was held twice")
	}
	if refusal.Error.Code != mcp.INVALID_REQUEST || refusal.ID.Value() != int64(7) ||
		!strings.Contains(refusal.Error.Message, "request id 7 is already in flight in this session; use a new id") {
		t.Fatalf("refusal %+v", refusal)
	}
	str, _, ok := f.Enter(json.RawMessage(`"7"`))
	if !ok {
		t.Fatal(`the string id "7" was taken for the number 7`)
	}
	defer str.Release()
	first.Release()
	second, _, ok := f.Enter(json.RawMessage(`7`))
	if !ok {
		t.Fatal("a released id stayed held")
	}
	first.Release() // late and again: must not free the second hold
	if _, _, ok := f.Enter(json.RawMessage(`7`)); ok {
		t.Fatal("a second release of an old hold freed the id a later request holds")
	}
	second.Release()
	if _, _, ok := f.Enter(json.RawMessage(`null`)); !ok {
		t.Fatal("what is not an id was held")
	}
}

// TestInFlightErrorNamesALongIDBriefly: the message repeats at most the
// start of a long id (the answer's id member carries all of it).
func TestInFlightErrorNamesALongIDBriefly(t *testing.T) {
	t.Parallel()
	long := `"` + strings.Repeat("x", 10000) + `"`
	e := InFlightError(json.RawMessage(long))
	if len(e.Error.Message) > 200 || e.ID.Value() != strings.Repeat("x", 10000) {
		t.Fatalf("message %d bytes, id %d bytes", len(e.Error.Message), len(long))
	}
}
