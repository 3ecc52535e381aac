package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultHTTPSessionIdle is how long an HTTP session lives without a
// request before it ends (CAIRN_HTTP_SESSION_IDLE).
const DefaultHTTPSessionIdle = 30 * time.Minute

// httpSessions are the MCP sessions the HTTP transport issued (protocol
// revisions up to 2025-11-25; 2026-07-28 has none). Each is bound to the API
// key that opened it: the same id with another key is as unknown as an id
// never issued (404, so a session id reveals nothing to a foreign key). A
// session ends with DELETE or after idle without a request.
type httpSessions struct {
	mu        sync.Mutex
	live      map[string]*httpSession
	idle      time.Duration
	maxCalls  int
	now       func() time.Time
	lastSweep time.Time
}

type httpSession struct {
	holder   string
	lastSeen time.Time
	// ended is cancelled when the session ends, closing its event streams.
	ended  context.Context
	cancel context.CancelFunc
	// calls bounds the tool calls the session runs at once (D21).
	calls chan struct{}
}

var errNoSession = errors.New("no such session")

func newHTTPSessions(idle time.Duration, maxCalls int) *httpSessions {
	if idle <= 0 {
		idle = DefaultHTTPSessionIdle
	}
	if maxCalls <= 0 {
		maxCalls = DefaultMaxConcurrentCalls
	}
	return &httpSessions{live: map[string]*httpSession{}, idle: idle, maxCalls: maxCalls, now: time.Now}
}

// open issues a session id bound to holder.
func (s *httpSessions) open(holder string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "cairn-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.Sub(s.lastSweep) > s.idle/2 {
		s.sweepLocked(now)
	}
	ended, cancel := context.WithCancel(context.Background())
	s.live[id] = &httpSession{holder: holder, lastSeen: now, ended: ended, cancel: cancel, calls: make(chan struct{}, s.maxCalls)}
	return id
}

// use checks that id is a live session of holder, counts it as used and
// returns it.
func (s *httpSessions) use(id, holder string) (*httpSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.live[id]
	now := s.now()
	switch {
	case !ok || sess.holder != holder:
		return nil, errNoSession
	case now.Sub(sess.lastSeen) >= s.idle:
		s.endLocked(id)
		return nil, errNoSession
	}
	sess.lastSeen = now
	return sess, nil
}

// end forgets a session and closes its event streams.
func (s *httpSessions) end(id string) {
	s.mu.Lock()
	s.endLocked(id)
	s.mu.Unlock()
}

func (s *httpSessions) endLocked(id string) {
	if sess, ok := s.live[id]; ok {
		sess.cancel()
		delete(s.live, id)
	}
}

// count is the number of sessions not yet ended or swept.
func (s *httpSessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

func (s *httpSessions) sweepLocked(now time.Time) {
	s.lastSweep = now
	for id, sess := range s.live {
		if now.Sub(sess.lastSeen) >= s.idle {
			s.endLocked(id)
		}
	}
}

// holderOf names whom a request's sessions belong to: its API key, or, on a
// server without keys, the one local caller.
func holderOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	if p, ok := r.Context().Value(apiKeyPrincipalKey{}).(Principal); ok {
		if p.KeyID != "" {
			return "key:" + p.KeyID
		}
		return "user:" + p.UserID
	}
	return ""
}

// ResolveSessionIdManager gives mcp-go the session ids of the request's
// holder; without a request (its idle sweeper, shutdown) it may end any.
func (s *httpSessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return sessionIDs{s: s, any: true}
	}
	return sessionIDs{s: s, holder: holderOf(r)}
}

// sessionIDs is mcp-go's view of one holder's sessions.
type sessionIDs struct {
	s      *httpSessions
	holder string
	any    bool
}

func (m sessionIDs) Generate() string { return m.s.open(m.holder) }

func (m sessionIDs) Validate(id string) (bool, error) {
	_, err := m.s.use(id, m.holder)
	return false, err
}

func (m sessionIDs) Terminate(id string) (bool, error) {
	if _, err := m.s.use(id, m.holder); m.any || err == nil {
		m.s.end(id)
	}
	return false, nil
}

// guardSessions wraps next so that every request of a session-based
// protocol revision names a live session of its own key, answering in the
// D3 envelope: 400 without Mcp-Session-Id, 404 for an id that was never
// issued, has ended or expired, or belongs to another key. mcp-go checks
// the same through sessionIDs; this answers first, and for GET and DELETE,
// which mcp-go lets through unchecked. A session's event stream closes when
// the session ends, and its tool calls beyond CAIRN_MAX_CONCURRENT_CALLS
// wait in order, as on stdio.
func guardSessions(s *httpSessions, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, method := sessionNeed(r)
		if !need {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			writeHTTPError(w, errs.New(400, errs.InvalidInput, "this request needs the Mcp-Session-Id header the server returned at initialize").
				With("field", server.HeaderKeySessionID))
			return
		}
		sess, err := s.use(id, holderOf(r))
		if err != nil {
			writeHTTPError(w, errs.New(404, errs.NotFound, "no such session (it was never issued, has ended, expired after being idle, or was opened with another key): initialize a new one").
				With("field", server.HeaderKeySessionID))
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		if r.Method != http.MethodDelete {
			// Ending the session ends what runs in it, its stream included.
			defer context.AfterFunc(sess.ended, cancel)()
		}
		if method == string(mcp.MethodToolsCall) {
			select {
			case sess.calls <- struct{}{}:
				defer func() { <-sess.calls }()
			case <-ctx.Done():
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// sessionNeed reports whether a request must name a session, and its
// JSON-RPC method: GET and DELETE always, every POST but initialize, except
// in protocol 2026-07-28, which is stateless.
func sessionNeed(r *http.Request) (need bool, method string) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return false, ""
	}
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		return true, ""
	case http.MethodPost:
	default:
		return false, ""
	}
	var probe struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(bodyOf(r), &probe) != nil {
		// mcp-go answers a body that is not one JSON-RPC message.
		return false, ""
	}
	if mcp.IsModernProtocol(probe.Params.Meta.ProtocolVersion()) {
		return false, ""
	}
	return probe.Method != string(mcp.MethodInitialize), probe.Method
}
