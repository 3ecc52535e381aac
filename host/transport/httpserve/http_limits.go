package httpserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// perKeyLimit bounds the requests one API key has open at once: a body
// being sent, a call running, an event stream. Without it one key could
// hold any number of connections, each with the memory of its request
// (docs/decisions.md D33). Over the limit a request is refused at once
// with 429, never queued: a queue would hold the very connections the
// limit is for.
type perKeyLimit struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newPerKeyLimit(max int) *perKeyLimit {
	return &perKeyLimit{max: max, open: map[string]int{}}
}

// take counts one more request of key; false when it has max open.
func (l *perKeyLimit) take(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return false
	}
	l.open[key]++
	return true
}

func (l *perKeyLimit) give(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// limitPerKey wraps next, behind requireCredential, with the per-key
// limit: per API key, or per token subject (docs/decisions.md D44).
func limitPerKey(l *perKeyLimit, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalOf(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		key := p.KeyID
		if key == "" {
			key = "user:" + p.UserID
		}
		if !l.take(key) {
			w.Header().Set("Retry-After", "1")
			writeJSONRPCError(w, http.StatusTooManyRequests, mcp.INVALID_REQUEST,
				fmt.Sprintf("this API key already has %d requests open, its limit (CAIRN_HTTP_MAX_CONNS_PER_KEY); retry when one ends", l.max))
			return
		}
		defer l.give(key)
		next.ServeHTTP(w, r)
	})
}

// writeJSONRPCError answers a request the server refuses before reading it
// as JSON-RPC: the error has no id.
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(code, msg, nil)})
}
