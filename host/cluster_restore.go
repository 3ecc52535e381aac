package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A session another server opened continues here by replaying, through
// mcp-go itself, what the client did there: its initialize (same id, same
// clientInfo and capabilities), its log level and its subscriptions. The
// client sees none of it; mcp-go ends up holding the session as if it had
// been opened here.

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

// record stores what a request changed in its session: the log level, a
// subscription.
func (s *httpSessions) record(id, method string, body []byte) {
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
}

// replay restores session id from st on this server, before the request r
// that named it is served.
func (s *httpSessions) replay(r *http.Request, id string, st *sharedSessionState, next http.Handler) {
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
	ctx = context.WithValue(r.Context(), checkedSessionKey{}, id)
	if st.LogLevel != "" {
		params, _ := json.Marshal(map[string]string{"level": st.LogLevel})
		if _, err := replayCall(ctx, r, next, id, init.ProtocolVersion, mcp.MethodSetLogLevel, params); err != nil {
			s.log.Warn("session's log level not restored", "session", id, "error", err)
		}
	}
	for _, uri := range st.Subscriptions {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		if _, err := replayCall(ctx, r, next, id, init.ProtocolVersion, mcp.MethodResourcesSubscribe, params); err != nil {
			s.log.Warn("session's subscription not restored", "session", id, "uri", uri, "error", err)
		}
	}
	// mcp-go stops a request's notification forwarder after answering it;
	// one not yet stopped would take (and drop) the first notification of
	// the request that follows at once. Let the replayed ones stop first.
	time.Sleep(replaySettle)
	s.log.Debug("session restored from the cluster", "session", id, "subscriptions", len(st.Subscriptions))
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
