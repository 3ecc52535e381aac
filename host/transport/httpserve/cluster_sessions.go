package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SessionsSchema keeps every 2025-11-25 HTTP session of the cluster:
// whose it is, what the client said at initialize and what it set since,
// and when it was last used, so any server can continue it.
const SessionsSchema = `CREATE TABLE cairn_http_sessions (
	id        text        PRIMARY KEY,
	holder    text        NOT NULL,
	state     jsonb       NOT NULL DEFAULT '{}',
	opened_at timestamptz NOT NULL DEFAULT now(),
	last_seen timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cairn_http_sessions_last_seen ON cairn_http_sessions (last_seen)`

// sharedSessionState is what another server needs to continue a session
// without the client initializing again.
type sharedSessionState struct {
	// Initialize is the client's initialize params: protocol version,
	// clientInfo (its identity, D4) and capabilities.
	Initialize json.RawMessage `json:"initialize,omitempty"`
	// LogLevel is the level logging/setLevel chose.
	LogLevel string `json:"log_level,omitempty"`
	// Subscriptions are the resources/subscribe URIs still subscribed.
	Subscriptions []string `json:"subscriptions,omitempty"`
}

// sharedSessions is the cluster's table of HTTP sessions. Every request of
// a session reads its row: one statement that checks holder and idle
// expiry, so an ended or expired session is unknown to every server at
// once. The same statement moves last_seen only when it is older than
// touchEvery: a write per request would cost every request a new row
// version, an index entry and WAL (docs/decisions.md D40), for a time that
// matters to the minute.
type sharedSessions struct {
	pool *pgxpool.Pool
	idle time.Duration
}

// sharedTimeout bounds each statement: a request must not hang on the
// database.
const sharedTimeout = 5 * time.Second

func (s *sharedSessions) open(id, holder string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, "INSERT INTO cairn_http_sessions (id, holder) VALUES ($1, $2)", id, holder)
	return err
}

// touchEvery is how stale last_seen may grow before a request moves it: a
// tenth of the idle limit, at most 5 s, so a session in use ends at most
// that much before the idle limit after its last request.
func (s *sharedSessions) touchEvery() time.Duration { return min(s.idle/10, 5*time.Second) }

// touch counts a request of holder's session id and returns its state;
// found is false for a session that never was, has ended, has expired or
// is another holder's.
func (s *sharedSessions) touch(id, holder string) (st sharedSessionState, found bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	var raw []byte
	// The UPDATE in WITH runs whether or not the SELECT reads it.
	err = s.pool.QueryRow(ctx, `WITH live AS (
			SELECT id, state, last_seen FROM cairn_http_sessions
			WHERE id = $1 AND holder = $2 AND last_seen > now() - make_interval(secs => $3)
		), touched AS (
			UPDATE cairn_http_sessions AS s SET last_seen = now() FROM live
			WHERE s.id = live.id AND live.last_seen < now() - make_interval(secs => $4)
		)
		SELECT state FROM live`, id, holder, s.idle.Seconds(), s.touchEvery().Seconds()).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	return st, true, json.Unmarshal(raw, &st)
}

// alive reports whether holder's session id is still live in the cluster,
// without counting a request.
func (s *sharedSessions) alive(ctx context.Context, id, holder string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM cairn_http_sessions
		WHERE id = $1 AND holder = $2 AND last_seen > now() - make_interval(secs => $3)`, id, holder, s.idle.Seconds()).Scan(&n)
	return n == 1, err
}

// streamCheck is how often a server holding a session's event stream
// checks that the session was not ended through another server.
const streamCheck = 2 * time.Second

// watchStream ends this server's copy of a session, closing its event
// stream, once the session has ended elsewhere (DELETE through another
// server, idle expiry); it returns when ctx (the stream) ends.
func (s *httpSessions) watchStream(ctx context.Context, id, holder string) {
	tick := time.NewTicker(streamCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ok, err := s.shared.alive(ctx, id, holder); err == nil && !ok {
			s.forget(id)
			return
		}
	}
}

func (s *sharedSessions) end(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, "DELETE FROM cairn_http_sessions WHERE id = $1", id)
	return err
}

// Each change of a session's state is one statement on its row, so two
// servers changing one session at once lose neither change.
const (
	setInitialize = `UPDATE cairn_http_sessions SET state = jsonb_set(state, '{initialize}', $2::jsonb) WHERE id = $1`
	setLogLevel   = `UPDATE cairn_http_sessions SET state = jsonb_set(state, '{log_level}', to_jsonb($2::text)) WHERE id = $1`
	addSubscribed = `UPDATE cairn_http_sessions SET state = jsonb_set(state, '{subscriptions}',
		coalesce(state->'subscriptions', '[]'::jsonb) - $2::text || to_jsonb($2::text)) WHERE id = $1`
	dropSubscribed = `UPDATE cairn_http_sessions SET state = jsonb_set(state, '{subscriptions}',
		coalesce(state->'subscriptions', '[]'::jsonb) - $2::text) WHERE id = $1`
)

func (s *sharedSessions) set(statement, id string, value any) error {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, statement, id, value)
	return err
}

// expireEvery deletes the rows of sessions idle past the limit, a few
// times per idle period, until ctx ends. touch already refuses them; this
// keeps the table small.
func (s *sharedSessions) expireEvery(ctx context.Context, log hclog.Logger) {
	tick := time.NewTicker(max(s.idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, err := s.pool.Exec(ctx, "DELETE FROM cairn_http_sessions WHERE last_seen < now() - make_interval(secs => $1)", s.idle.Seconds())
		if err != nil && ctx.Err() == nil {
			log.Warn("expire shared sessions", "error", err)
		}
	}
}
