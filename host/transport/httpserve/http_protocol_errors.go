package httpserve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
)

// protocolErrors gives HTTP clients the JSON-RPC error codes stdio clients
// get where mcp-go alone answers otherwise: a malformed envelope is
// answered once with the request's id (jsonrpc.ProbeMessage), a
// resources/subscribe to a URI that does not exist is refused with -32002
// (Handler.RefuseSubscription), and a prompts/get refused for its arguments
// or name is invalid params (-32602) instead of an internal error
// (jsonrpc.InvalidParams). Methods of the extensions the host serves,
// which mcp-go does not know, are answered by the host
// (Handler.AnswerExtension), after the headers 2026-07-28 requires
// (modernHeaders).
func (s *Server) protocolErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = WithTraceContext(WithIdempotencyKey(r))
		body := bodyOf(r)
		if r.Method != http.MethodPost || len(body) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		probe, answer, handled := jsonrpc.ProbeMessage(body)
		if handled {
			// Malformed: answered here, once (docs/decisions.md D32). An
			// answer with the request's id is the request's answer (200);
			// one with id null says the message was not a request (400).
			if answer == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			if answer.ID.IsNil() {
				w.WriteHeader(http.StatusBadRequest)
			}
			_ = json.NewEncoder(w).Encode(answer)
			return
		}
		if e := modernHeaders(r, probe, body); e != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(e)
			return
		}
		if ext, ok := s.h.AnswerExtension(r.Context(), probe.Method, body); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(modernStatus(probe, ext))
			_ = json.NewEncoder(w).Encode(ext)
			return
		}
		switch mcp.MCPMethod(probe.Method) {
		case mcp.MethodResourcesSubscribe:
			if e, refused := s.h.RefuseSubscription(r.Context(), body); refused {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(e)
				return
			}
		case mcp.MethodPromptsGet:
			rw := &bufferedJSON{ResponseWriter: w}
			next.ServeHTTP(rw, r)
			rw.finish(probe.Method)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bufferedJSON holds back a JSON response so its error code can be
// corrected; anything else (an SSE stream) passes straight through.
type bufferedJSON struct {
	http.ResponseWriter
	status  int
	decided bool
	hold    bool
	buf     bytes.Buffer
}

func (b *bufferedJSON) WriteHeader(status int) {
	if b.decided {
		return
	}
	b.decided, b.status = true, status
	b.hold = strings.HasPrefix(b.Header().Get("Content-Type"), "application/json")
	if !b.hold {
		b.ResponseWriter.WriteHeader(status)
	}
}

func (b *bufferedJSON) Write(p []byte) (int, error) {
	if !b.decided {
		b.WriteHeader(http.StatusOK)
	}
	if b.hold {
		return b.buf.Write(p)
	}
	return b.ResponseWriter.Write(p)
}

// Flush passes a stream's flushes on.
func (b *bufferedJSON) Flush() {
	if f, ok := b.ResponseWriter.(http.Flusher); ok && !b.hold {
		f.Flush()
	}
}

// finish writes a held response, with jsonrpc.InvalidParams's code when it is an
// error of method.
func (b *bufferedJSON) finish(method string) {
	if !b.hold {
		return
	}
	out := b.buf.Bytes()
	var e mcp.JSONRPCError
	if json.Unmarshal(out, &e) == nil && e.Error.Code == mcp.INTERNAL_ERROR {
		if fixed, ok := jsonrpc.InvalidParams(method, e).(mcp.JSONRPCError); ok && fixed.Error.Code != e.Error.Code {
			if raw, err := json.Marshal(fixed); err == nil {
				out = append(raw, '\n')
			}
		}
	}
	b.Header().Set("Content-Length", strconv.Itoa(len(out)))
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(out)
}
