// Package visiontest is a fake of the hosted model's Messages API on
// loopback, for tests of the vision plugin and its libraries. It checks the
// x-api-key header, records every request and answers scripted replies.
package visiontest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
}

// Reply is one scripted answer.
type Reply struct {
	Status int
	Header map[string]string
	Body   any
}

// API is the fake server.
type API struct {
	URL string
	Key string

	srv      *httptest.Server
	mu       sync.Mutex
	requests []Request
	replies  []Reply
	// Fallback answers messages requests once the script is used up; nil
	// answers 500 so a test notices a call it did not expect.
	Fallback func(r Request) Reply
	// Models, when set, are the only model ids GET /v1/models/{id} knows;
	// others answer 404 as the real API does. Nil knows every id.
	Models []string
	// Betas, when set, are the only anthropic-beta values the models
	// endpoint accepts; a request naming another answers 400.
	Betas []string
}

// New starts a fake API that accepts only key, closed when the test ends.
func New(t testing.TB, key string) *API {
	a := &API{Key: key}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.srv.URL
	t.Cleanup(a.srv.Close)
	return a
}

// Push appends scripted replies for messages requests, answered in order.
func (a *API) Push(r ...Reply) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replies = append(a.replies, r...)
}

// Requests returns the recorded requests.
func (a *API) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// MessageRequests returns the recorded POST /v1/messages requests.
func (a *API) MessageRequests() []Request {
	var out []Request
	for _, r := range a.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	_ = json.Unmarshal(raw, &rec.Body)
	a.mu.Lock()
	a.requests = append(a.requests, rec)
	a.mu.Unlock()
	if r.Header.Get("X-Api-Key") != a.Key {
		write(w, ErrorReply(401, "authentication_error", "invalid x-api-key"))
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
		a.mu.Lock()
		models, betas := a.Models, a.Betas
		a.mu.Unlock()
		if models != nil && !slices.Contains(models, id) {
			write(w, ErrorReply(404, "not_found_error", "model: "+id))
			return
		}
		for _, b := range strings.Split(r.Header.Get("Anthropic-Beta"), ",") {
			if b = strings.TrimSpace(b); b != "" && betas != nil && !slices.Contains(betas, b) {
				write(w, ErrorReply(400, "invalid_request_error", "Unexpected value(s) `"+b+"` for the `anthropic-beta` header"))
				return
			}
		}
		write(w, Reply{Status: 200, Body: map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		a.mu.Lock()
		var rep Reply
		switch {
		case len(a.replies) > 0:
			rep, a.replies = a.replies[0], a.replies[1:]
		case a.Fallback != nil:
			f := a.Fallback
			a.mu.Unlock()
			rep = f(rec)
			a.mu.Lock()
		default:
			rep = ErrorReply(500, "api_error", "visiontest: no scripted reply left")
		}
		a.mu.Unlock()
		write(w, rep)
	default:
		write(w, ErrorReply(404, "not_found_error", "visiontest: no route "+r.Method+" "+r.URL.Path))
	}
}

func write(w http.ResponseWriter, rep Reply) {
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status == 0 {
		rep.Status = 200
	}
	w.WriteHeader(rep.Status)
	_ = json.NewEncoder(w).Encode(rep.Body)
}

var msgN struct {
	sync.Mutex
	n int
}

func nextID() string {
	msgN.Lock()
	defer msgN.Unlock()
	msgN.n++
	return fmt.Sprintf("msg_%d", msgN.n)
}

func message(content []map[string]any, stop string) map[string]any {
	return map[string]any{
		"id": nextID(), "type": "message", "role": "assistant", "model": "fake-model",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 20},
	}
}

// TextReply is a message with one text block.
func TextReply(text string) Reply {
	return Reply{Status: 200, Body: message([]map[string]any{{"type": "text", "text": text}}, "end_turn")}
}

// JSONReply is a message whose text is v encoded as JSON.
func JSONReply(v any) Reply {
	b, _ := json.Marshal(v)
	return TextReply(string(b))
}

// ToolUse is one tool_use block.
type ToolUse struct {
	ID    string
	Name  string
	Input map[string]any
}

// ToolUseReply is a message asking for tool calls (the computer tool when
// Name is empty), after an optional text.
func ToolUseReply(text string, uses ...ToolUse) Reply {
	var content []map[string]any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, u := range uses {
		name := u.Name
		if name == "" {
			name = "computer"
		}
		content = append(content, map[string]any{"type": "tool_use", "id": u.ID, "name": name, "input": u.Input})
	}
	return Reply{Status: 200, Body: message(content, "tool_use")}
}

// ErrorReply is an API error answer.
func ErrorReply(status int, typ, msg string) Reply {
	return Reply{Status: status, Body: map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}}
}

// Retryable is an overload answer asking the client to retry at once.
func Retryable(status int) Reply {
	r := ErrorReply(status, "overloaded_error", "overloaded")
	r.Header = map[string]string{"retry-after-ms": "1", "x-should-retry": "true"}
	return r
}
