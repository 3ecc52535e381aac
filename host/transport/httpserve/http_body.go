package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/jsonl"
)

// boundBody reads a POST body of at most limit bytes (CAIRN_MAX_MESSAGE,
// the same bound as over stdio) before anything parses it. A larger body is
// refused with 413 and a JSON-RPC invalid-request error, unread past the
// limit; the session stays usable. A body that has not fully arrived
// within timeout (CAIRN_HTTP_BODY_TIMEOUT) is cut off with 408 and the
// connection closed: a client trickling its body would otherwise hold the
// connection, and what it sent so far, for as long as it liked
// (docs/decisions.md D33).
func boundBody(limit int, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
		if err != nil {
			// The deadline stays: the server's discarding the rest of a
			// body that trickles would wait for it otherwise.
			var tooBig *http.MaxBytesError
			status := http.StatusBadRequest
			msg := "the request body could not be read: " + err.Error()
			switch {
			case errors.As(err, &tooBig):
				status, msg = http.StatusRequestEntityTooLarge, jsonl.TooLongMessage(limit)
			case errors.Is(err, os.ErrDeadlineExceeded):
				status = http.StatusRequestTimeout
				msg = fmt.Sprintf("the request body did not arrive within %s (CAIRN_HTTP_BODY_TIMEOUT); it was discarded", timeout)
				w.Header().Set("Connection", "close")
			}
			writeJSONRPCError(w, status, mcp.INVALID_REQUEST, msg)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
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

// liftArguments has the Handler lift a tools/call's arguments out of a
// POST body boundBody read.
// The body kept for the rest of the chain (bodyOf) stays whole; only what
// mcp-go reads loses its arguments.
func (s *Server) liftArguments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bodyOf(r)
		var probe struct {
			Method string `json:"method"`
		}
		// A batch or bad JSON is left as it is: mcp-go answers it.
		if len(body) > 0 && json.Unmarshal(body, &probe) == nil && probe.Method == string(mcp.MethodToolsCall) {
			ctx, msg := s.h.LiftToolArguments(r.Context(), probe.Method, body)
			r = r.WithContext(ctx)
			r.Body = io.NopCloser(bytes.NewReader(msg))
		}
		next.ServeHTTP(w, r)
	})
}
