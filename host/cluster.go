package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// HostArea names the host's own tables in cairn_migrations.
const HostArea = "host"

// HostMigrations are the host's own tables in PostgreSQL: the cluster bus
// and the HTTP sessions every server can continue. No area's store is
// touched; the areas migrate their own.
var HostMigrations = []pgmigrate.Step{
	{Version: 1, Name: "cluster bus events", SQL: events.BusSchema},
	{Version: 2, Name: "shared http sessions", SQL: sharedSessionsSchema},
}

// cluster is what a server shares with the others when CAIRN_STORE is
// PostgreSQL: the event bus and the HTTP sessions.
type cluster struct {
	pool     *pgxpool.Pool
	bus      *events.Cluster
	sessions *sharedSessions
	stop     context.CancelFunc
	done     chan struct{}
}

// joinCluster connects to the store's database, applies the host's
// migrations and joins the cluster bus. Without PostgreSQL it returns nil
// and nothing of this runs; nor in TEST mode, whose stores live in its
// temporary data dir.
func (h *Host) joinCluster(ctx context.Context, sessionIdle time.Duration) (*cluster, error) {
	if h.cfg.Store == "" || h.cfg.TempDataDir {
		return nil, nil
	}
	pool, err := pgmigrate.Connect(ctx, h.cfg.Store, 10*time.Second)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cluster: cannot reach the store's PostgreSQL (%s): %v", pgmigrate.Redact(h.cfg.Store), err)
	}
	if _, err := pgmigrate.Apply(ctx, pool, HostArea, HostMigrations); err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "cluster: host migrations: %v", err)
	}
	id := serverID()
	bus, err := events.JoinCluster(ctx, h.bus, pool, events.ClusterOptions{Server: id, Log: h.log.Named("cluster")})
	if err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "cluster: join the event bus: %v", err)
	}
	run, stop := context.WithCancel(context.Background())
	c := &cluster{pool: pool, bus: bus, sessions: &sharedSessions{pool: pool, idle: sessionIdle}, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.sessions.expireEvery(run, h.log.Named("cluster"))
	}()
	h.log.Info("joined the cluster", "server", id, "store", pgmigrate.Redact(h.cfg.Store))
	return c, nil
}

// leave stops following and forwarding; the sessions this server served
// stay in the store for the others.
func (c *cluster) leave() {
	if c == nil {
		return
	}
	c.stop()
	<-c.done
	c.bus.Leave()
	c.pool.Close()
}

// serverID names this server in the cluster: its host name and a random
// suffix, so two servers on one machine differ and a restart is a new
// server.
func serverID() string {
	name, _ := os.Hostname()
	name = strings.ReplaceAll(name, " ", "-")
	if name == "" {
		name = "cairn"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return name + "-" + hex.EncodeToString(b[:])
}
