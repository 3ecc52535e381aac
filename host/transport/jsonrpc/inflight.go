package jsonrpc

import (
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
)

// InFlight is the set of request ids one session holds: from the moment a
// request is read until its answer is on its way. A second request with an
// id the session still holds is refused at once with -32600, never merged
// with the first nor run (docs/decisions.md D42); once the first is
// answered its id is free again. The zero value is ready to use.
type InFlight struct {
	mu  sync.Mutex
	ids map[string]uint64 // rpcid.Key → the hold's generation
	gen uint64
}

// Hold is one request's hold on its id.
type Hold struct {
	f   *InFlight
	key string
	gen uint64
}

// Enter holds id for a request. ok false: the id is already held, and
// refusal is the request's answer. An id that is not one (rpcid.Key) is
// not held.
func (f *InFlight) Enter(id json.RawMessage) (h Hold, refusal mcp.JSONRPCError, ok bool) {
	key, valid := rpcid.Key(id)
	if !valid {
		return Hold{}, refusal, true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, held := f.ids[key]; held {
		return Hold{}, InFlightError(id), false
	}
	if f.ids == nil {
		f.ids = map[string]uint64{}
	}
	f.gen++
	f.ids[key] = f.gen
	return Hold{f: f, key: key, gen: f.gen}, refusal, true
}

// Release frees the id. It may be called more than once: a later call
// never frees the id a later request holds.
func (h Hold) Release() {
	if h.f == nil {
		return
	}
	h.f.mu.Lock()
	if h.f.ids[h.key] == h.gen {
		delete(h.f.ids, h.key)
	}
	h.f.mu.Unlock()
}

// InFlightError is the answer to a request whose id its session still
// holds: -32600 with the request's own id, naming it.
func InFlightError(id json.RawMessage) mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(rpcid.Decode(id)),
		Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, rpcid.InFlightMessage(id), nil)}
}
