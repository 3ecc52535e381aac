package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A session continues on any server of a cluster. A server that has not
// seen it, or whose copy is behind what the client did through other
// servers, replays it through mcp-go itself before serving the request: the
// initialize (same id, same clientInfo and capabilities), the log level, the
// subscriptions made and dropped. The client sees none of it; mcp-go ends up
// holding the session as if every request had come here.

// sessionMirror is what this server's mcp-go holds of a session.
type sessionMirror struct {
	mu sync.Mutex
	// here: mcp-go has the session (it was initialized or replayed here).
	here bool
	// version is the protocol version the replayed initialize negotiated.
	version  string
	logLevel string
	subs     []string
}

// recordInitialize stores a session's initialize params once mcp-go has
// answered it with the session id.
func (s *httpSessions) recordInitialize(id string, r *http.Request) {
	if id == "" {
		return
	}
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(bodyOf(r), &msg) != nil || msg.Method != string(mcp.MethodInitialize) || len(msg.Params) == 0 {
		return
	}
	if err := s.shared.set(setInitialize, id, string(msg.Params)); err != nil {
		s.log.Warn("session's initialize not shared with the cluster", "error", err)
	}
}

// record stores what a request served here changed in its session (the
// log level, a subscription), in the cluster and in this server's mirror.
func (s *httpSessions) record(id string, sess *httpSession, method string, body []byte) {
	var statement string
	switch method {
	case string(mcp.MethodSetLogLevel):
		statement = setLogLevel
	case string(mcp.MethodResourcesSubscribe):
		statement = addSubscribed
	case string(mcp.MethodResourcesUnsubscribe):
		statement = dropSubscribed
	default:
		return
	}
	var msg struct {
		Params struct {
			Level string `json:"level"`
			URI   string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return
	}
	value := msg.Params.URI
	if method == string(mcp.MethodSetLogLevel) {
		value = msg.Params.Level
	}
	if value == "" {
		return
	}
	if err := s.shared.set(statement, id, value); err != nil {
		s.log.Warn("session change not shared with the cluster", "method", method, "error", err)
	}
	m := &sess.mirror
	m.mu.Lock()
	defer m.mu.Unlock()
	switch statement {
	case setLogLevel:
		m.logLevel = value
	case addSubscribed:
		m.subs = append(slices.DeleteFunc(m.subs, func(u string) bool { return u == value }), value)
	case dropSubscribed:
		m.subs = slices.DeleteFunc(m.subs, func(u string) bool { return u == value })
	}
}

// catchUp brings this server's copy of session id up to st, the shared
// state, before the request r is served.
func (s *httpSessions) catchUp(r *http.Request, id string, sess *httpSession, st *sharedSessionState, next http.Handler) {
	m := &sess.mirror
	m.mu.Lock()
	defer m.mu.Unlock()
	replayed := false
	if !m.here {
		ctx := context.WithValue(r.Context(), restoringSessionKey{}, id)
		res, err := replayCall(ctx, r, next, "", "", mcp.MethodInitialize, st.Initialize)
		if err != nil {
			s.log.Warn("session not restored from the cluster", "session", id, "error", err)
			return
		}
		var init struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(res, &init)
		m.here, m.version, replayed = true, init.ProtocolVersion, true
	}
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if version == "" {
		version = m.version
	}
	ctx := context.WithValue(r.Context(), checkedSessionKey{}, id)
	call := func(method mcp.MCPMethod, key, value string) bool {
		params, _ := json.Marshal(map[string]string{key: value})
		replayed = true
		if _, err := replayCall(ctx, r, next, id, version, method, params); err != nil {
			s.log.Warn("session change from another server not replayed", "session", id, "method", method, "error", err)
			return false
		}
		return true
	}
	if st.LogLevel != "" && st.LogLevel != m.logLevel && call(mcp.MethodSetLogLevel, "level", st.LogLevel) {
		m.logLevel = st.LogLevel
	}
	for _, uri := range m.subs {
		if !slices.Contains(st.Subscriptions, uri) {
			call(mcp.MethodResourcesUnsubscribe, "uri", uri)
		}
	}
	for _, uri := range st.Subscriptions {
		if !slices.Contains(m.subs, uri) {
			call(mcp.MethodResourcesSubscribe, "uri", uri)
		}
	}
	m.subs = slices.Clone(st.Subscriptions)
	if replayed {
		// mcp-go stops a request's notification forwarder after answering
		// it; one not yet stopped would take (and drop) the first
		// notification of the request that follows at once. Let the
		// replayed ones stop first.
		time.Sleep(replaySettle)
		s.log.Debug("session caught up with the cluster", "session", id, "log_level", m.logLevel, "subscriptions", len(m.subs))
	}
}

// replaySettle is long enough for the forwarders of the replayed requests
// to see that their requests ended, even on a busy machine.
const replaySettle = 25 * time.Millisecond

// replayCall sends one JSON-RPC request to mcp-go as r's client would
// have, and returns its result.
func replayCall(ctx context.Context, r *http.Request, next http.Handler, id, version string, method mcp.MCPMethod, params json.RawMessage) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": "cairn-restore", "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req := r.Clone(ctx)
	req.Method = http.MethodPost
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Del(server.HeaderKeySessionID)
	req.Header.Del(mcp.HeaderProtocolVersion)
	req.Header.Del("Last-Event-ID")
	if id != "" {
		req.Header.Set(server.HeaderKeySessionID, id)
	}
	if version != "" {
		req.Header.Set(mcp.HeaderProtocolVersion, version)
	}
	w := &replayWriter{header: http.Header{}}
	next.ServeHTTP(w, req)
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.body.Bytes(), &answer); err != nil {
		return nil, fmt.Errorf("%s answered %d: %s", method, w.status, bytes.TrimSpace(w.body.Bytes()))
	}
	if answer.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, answer.Error.Message)
	}
	return answer.Result, nil
}

// replayWriter keeps a replayed request's answer. It does not flush, so
// mcp-go answers in one JSON body.
type replayWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *replayWriter) Header() http.Header { return w.header }

func (w *replayWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

func (w *replayWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
