package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/jsonl"
)

// boundBody reads a POST body of at most limit bytes (CAIRN_MAX_MESSAGE,
// the same bound as over stdio) before anything parses it. A larger body is
// refused with 413 and a JSON-RPC invalid-request error, unread past the
// limit; the session stays usable.
func boundBody(limit int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
		if err != nil {
			var tooBig *http.MaxBytesError
			status := http.StatusBadRequest
			msg := "the request body could not be read: " + err.Error()
			if errors.As(err, &tooBig) {
				status, msg = http.StatusRequestEntityTooLarge, jsonl.TooLongMessage(limit)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, msg, nil)})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httpBodyKey{}, body)))
	})
}

type httpBodyKey struct{}

// bodyOf returns the POST body boundBody read.
func bodyOf(r *http.Request) []byte {
	b, _ := r.Context().Value(httpBodyKey{}).([]byte)
	return b
}
