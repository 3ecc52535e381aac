package events

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BusSchema is the table a cluster bus writes every server's events to; the
// host applies it as one of its migrations.
const BusSchema = `CREATE TABLE cairn_bus_events (
	id     bigserial   PRIMARY KEY,
	origin text        NOT NULL,
	event  json        NOT NULL,
	at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cairn_bus_events_at ON cairn_bus_events (at)`

// busChannel is the NOTIFY channel that wakes the followers; the rows, not
// the notifications, carry the events, so a lost notification delays an
// event by at most one poll.
const busChannel = "cairn_bus"

// busLockKey ("cairnbus" in ASCII) serializes the writers, so ids commit in
// the order they are drawn and a follower that read up to id n can never
// later find a row below n.
const busLockKey int64 = 0x636169726e627573

// Cluster defaults.
const (
	DefaultClusterRetention = 10 * time.Minute
	DefaultClusterPoll      = 2 * time.Second
	// outboxSize bounds the events waiting to be written; beyond it they are
	// dropped (and counted) rather than stalling publishers.
	outboxSize = 4096
	batchMax   = 256
)

// ClusterOptions configure JoinCluster.
type ClusterOptions struct {
	// Server names this server in the rows it writes; events with it are
	// never brought back to it.
	Server string
	// Retention is how long rows are kept (DefaultClusterRetention): a
	// server cut off longer than that misses what was deleted meanwhile.
	Retention time.Duration
	// Poll is how often a follower reads new rows without a notification
	// (DefaultClusterPoll).
	Poll time.Duration
	Log  hclog.Logger
}

// ClusterStats is the cluster bus's line in server_health.
type ClusterStats struct {
	Server    string `json:"server"`
	Connected bool   `json:"connected"`
	EventsIn  uint64 `json:"events_in"`
	EventsOut uint64 `json:"events_out"`
	Dropped   uint64 `json:"dropped"`
	LastError string `json:"last_error,omitempty"`
}

// Cluster joins a Bus to the other cairn servers on one PostgreSQL
// database: every event published here is written to cairn_bus_events with
// a NOTIFY, and every row another server wrote is published here with
// PublishRemote, so session and dashboard subscribers hear every server
// and plugin subscribers only their own.
type Cluster struct {
	bus  *Bus
	pool *pgxpool.Pool
	opts ClusterOptions
	log  hclog.Logger

	outbox chan Event
	wake   chan struct{}
	// listening is closed once the listener first connects.
	listening     chan struct{}
	listeningOnce sync.Once
	// lastID is the highest row read; only the follower touches it.
	lastID int64

	connected atomic.Bool
	in, out   atomic.Uint64
	dropped   atomic.Uint64
	lastErr   atomic.Pointer[string]

	cancel context.CancelFunc
	wg     sync.WaitGroup
	left   sync.Once
}

// JoinCluster starts following the cluster's events from now on and
// forwarding this bus's events to it, until Leave.
func JoinCluster(ctx context.Context, bus *Bus, pool *pgxpool.Pool, opts ClusterOptions) (*Cluster, error) {
	if opts.Retention <= 0 {
		opts.Retention = DefaultClusterRetention
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultClusterPoll
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	c := &Cluster{bus: bus, pool: pool, opts: opts, log: opts.Log,
		outbox: make(chan Event, outboxSize), wake: make(chan struct{}, 1), listening: make(chan struct{})}
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(id), 0) FROM cairn_bus_events").Scan(&c.lastID); err != nil {
		return nil, err
	}
	run, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(4)
	go c.listen(run)
	go c.follow(run)
	go c.write(run)
	go c.expire(run)
	bus.Forward(c.enqueue)
	bus.cluster.Store(c)
	// A server that answers before it listens would report itself cut off;
	// a listener still failing by then is reported by Stats and retried.
	select {
	case <-c.listening:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
	}
	return c, nil
}

// Leave stops forwarding and following; events still in the outbox are
// written first, for at most a few seconds.
func (c *Cluster) Leave() {
	c.left.Do(func() {
		c.bus.Forward(nil)
		c.bus.cluster.CompareAndSwap(c, nil)
		c.cancel()
		c.wg.Wait()
	})
}

// Stats reports the cluster bus for server_health.
func (c *Cluster) Stats() ClusterStats {
	st := ClusterStats{Server: c.opts.Server, Connected: c.connected.Load(),
		EventsIn: c.in.Load(), EventsOut: c.out.Load(), Dropped: c.dropped.Load()}
	if e := c.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

func (c *Cluster) fail(what string, err error) {
	msg := what + ": " + err.Error()
	c.lastErr.Store(&msg)
	c.log.Warn("cluster bus: "+what, "error", err)
}

func (c *Cluster) enqueue(ev Event) {
	select {
	case c.outbox <- ev:
	default:
		c.dropped.Add(1)
		c.log.Warn("event not sent to the cluster: outbox full", "event", ev.Type)
	}
}

// write sends the outbox in batches, retrying a failed batch until it is
// written or the bus leaves.
func (c *Cluster) write(ctx context.Context) {
	defer c.wg.Done()
	for {
		var batch []Event
		select {
		case ev := <-c.outbox:
			batch = append(batch, ev)
		case <-ctx.Done():
			c.flush()
			return
		}
		batch = c.drain(batch)
		for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
			err := c.insert(ctx, batch)
			if err == nil {
				c.out.Add(uint64(len(batch)))
				break
			}
			if ctx.Err() != nil {
				c.flush(batch...)
				return
			}
			c.fail("write events", err)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				c.flush(batch...)
				return
			}
		}
	}
}

func (c *Cluster) drain(batch []Event) []Event {
	for len(batch) < batchMax {
		select {
		case ev := <-c.outbox:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// flush writes what is pending when the bus leaves, giving up after a few
// seconds (a server going down must not hang on its database).
func (c *Cluster) flush(pending ...Event) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for batch := c.drain(pending); len(batch) > 0; batch = c.drain(nil) {
		if err := c.insert(ctx, batch); err != nil {
			c.fail("write events while leaving", err)
			return
		}
		c.out.Add(uint64(len(batch)))
	}
}

func (c *Cluster) insert(ctx context.Context, batch []Event) error {
	docs := make([]string, len(batch))
	for i, ev := range batch {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		docs[i] = string(b)
	}
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", busLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO cairn_bus_events (origin, event)
			SELECT $1, d::json FROM unnest($2::text[]) WITH ORDINALITY AS t(d, n) ORDER BY n`, c.opts.Server, docs); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", busChannel)
		return err
	})
}

// listen holds a connection of its own that LISTENs and wakes the follower
// on every notification, reconnecting after a failure. The follower reads
// once after every (re)connect, so what was written while the connection
// was down is read then.
func (c *Cluster) listen(ctx context.Context) {
	defer c.wg.Done()
	for backoff := 100 * time.Millisecond; ctx.Err() == nil; backoff = min(2*backoff, 5*time.Second) {
		err := c.listenOnce(ctx)
		c.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		c.fail("listen", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
	}
}

// ListenerName is the application_name of a cluster bus's listening
// connection, so an operator (or a test) can find it in pg_stat_activity.
func ListenerName(server string) string { return "cairn-bus " + server }

func (c *Cluster) listenOnce(ctx context.Context) error {
	cfg := c.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = ListenerName(c.opts.Server)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+busChannel); err != nil {
		return err
	}
	c.connected.Store(true)
	c.listeningOnce.Do(func() { close(c.listening) })
	c.nudge()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		c.nudge()
	}
}

func (c *Cluster) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// follow reads new rows when woken and every Poll.
func (c *Cluster) follow(ctx context.Context) {
	defer c.wg.Done()
	tick := time.NewTicker(c.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-tick.C:
		}
		if err := c.catchUp(ctx); err != nil && ctx.Err() == nil {
			c.fail("read events", err)
		}
	}
}

// catchUp publishes every row after the last one read that another server
// wrote, in id order.
func (c *Cluster) catchUp(ctx context.Context) error {
	for {
		n, err := c.readPage(ctx)
		if err != nil || n < batchMax {
			return err
		}
	}
}

func (c *Cluster) readPage(ctx context.Context) (int, error) {
	rows, err := c.pool.Query(ctx, "SELECT id, origin, event::text FROM cairn_bus_events WHERE id > $1 ORDER BY id LIMIT $2", c.lastID, batchMax)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			id     int64
			origin string
			doc    string
		)
		if err := rows.Scan(&id, &origin, &doc); err != nil {
			return n, err
		}
		n++
		c.lastID = id
		if origin == c.opts.Server {
			continue
		}
		var ev Event
		if err := json.Unmarshal([]byte(doc), &ev); err != nil {
			c.log.Warn("cluster bus: unreadable event skipped", "id", id, "origin", origin, "error", err)
			continue
		}
		c.in.Add(1)
		c.bus.PublishRemote(ev, origin)
	}
	return n, rows.Err()
}

// expire deletes rows older than the retention; every server does, which
// costs one indexed DELETE per server a few times per retention.
func (c *Cluster) expire(ctx context.Context) {
	defer c.wg.Done()
	every := max(c.opts.Retention/4, time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, err := c.pool.Exec(ctx, "DELETE FROM cairn_bus_events WHERE at < now() - make_interval(secs => $1)", c.opts.Retention.Seconds())
		if err != nil && !errors.Is(err, context.Canceled) {
			c.fail("expire events", err)
		}
	}
}
