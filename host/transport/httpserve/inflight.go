package httpserve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// holdRequestID holds a session's request id while the request runs: a
// second POST of the session with an id it still holds is answered at once
// with -32600 naming the id and goes no further (docs/decisions.md D42).
// ok false: the request was answered. The returned writer frees the id as
// the answer starts on its way (answerRelease), so a client that reuses
// the id once it has read the answer is never refused; done frees it when
// the request ends unanswered.
func holdRequestID(sess *httpSession, w http.ResponseWriter, id json.RawMessage) (rw http.ResponseWriter, done func(), ok bool) {
	hold, inUse, free := sess.inflight.Enter(id)
	if !free {
		w.Header().Set("Content-Type", "application/json")
		// The request's own answer, as a malformed request's with its id
		// is (protocolErrors): a JSON-RPC error, status 200.
		_ = json.NewEncoder(w).Encode(inUse)
		return nil, nil, false
	}
	return &answerRelease{ResponseWriter: w, release: hold.Release}, hold.Release, true
}

// answerRelease frees a request's id just before its answer is written: on
// the first body write of a JSON answer, or on the write of the event that
// carries the answer in an event stream (notifications and requests to the
// client before it have a method; the answer has none).
type answerRelease struct {
	http.ResponseWriter
	release func()
}

func (a *answerRelease) Write(p []byte) (int, error) {
	if !strings.HasPrefix(a.Header().Get("Content-Type"), "text/event-stream") || carriesAnswer(p) {
		a.release()
	}
	return a.ResponseWriter.Write(p)
}

// Flush passes a stream's flushes on (mcp-go streams only through a
// writer that flushes).
func (a *answerRelease) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (a *answerRelease) Unwrap() http.ResponseWriter { return a.ResponseWriter }

var idAndMethod = []string{"id", "method"}

// carriesAnswer reports whether a write to an event stream holds a
// JSON-RPC response: a data line with an id and no method.
func carriesAnswer(p []byte) bool {
	for _, line := range bytes.Split(p, []byte("\n")) {
		data, found := bytes.CutPrefix(line, []byte("data:"))
		if !found {
			continue
		}
		data = bytes.TrimSpace(data)
		spans := make([][2]int, 2)
		if !(&rawjson.Scanner{B: data}).Members(idAndMethod, spans) {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method json.RawMessage `json:"method"`
			}
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			if len(m.ID) > 0 && len(m.Method) == 0 {
				return true
			}
			continue
		}
		if spans[0][1] > 0 && spans[1][1] == 0 {
			return true
		}
	}
	return false
}
