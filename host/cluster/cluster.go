// Package cluster is what a server shares with the others when CAIRN_STORE
// is PostgreSQL: the host's own tables (the cluster bus, the shared HTTP
// sessions) and its membership of the cluster bus while a transport serves.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
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
	{Version: 2, Name: "shared http sessions", SQL: httpserve.SessionsSchema},
}

// Cluster is what a server shares with the others: the database and the
// event bus.
type Cluster struct {
	// Pool is the cluster's database.
	Pool *pgxpool.Pool
	bus  *events.Cluster
}

// Membership keeps the host in the cluster while at least one transport
// serves: the shared daemon serves many connections, and one process may
// serve HTTP and stdio.
type Membership struct {
	// Store is the PostgreSQL DSN (CAIRN_STORE); empty: no cluster.
	Store string
	// Local keeps a server with a store out of the cluster (TEST mode,
	// whose stores live in its temporary data dir).
	Local bool
	Bus   *events.Bus
	Log   hclog.Logger

	mu sync.Mutex
	n  int
	c  *Cluster
}

// Enter joins the cluster, or counts one more user of the joined one;
// leave undoes it, the last leaving the cluster. Without PostgreSQL the
// cluster is nil and nothing of this runs.
func (m *Membership) Enter(ctx context.Context) (c *Cluster, leave func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 {
		if m.c, err = m.join(ctx); err != nil {
			return nil, func() {}, err
		}
	}
	m.n++
	return m.c, sync.OnceFunc(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.n--; m.n == 0 {
			m.c.leave()
			m.c = nil
		}
	}), nil
}

// join connects to the store's database, applies the host's migrations
// and joins the cluster bus. Without PostgreSQL it returns nil; nor for a
// Local server.
func (m *Membership) join(ctx context.Context) (*Cluster, error) {
	if m.Store == "" || m.Local {
		return nil, nil
	}
	pool, err := pgmigrate.Connect(ctx, m.Store, 10*time.Second)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cluster: cannot reach the store's PostgreSQL (%s): %v", pgmigrate.Redact(m.Store), err)
	}
	if _, err := pgmigrate.Apply(ctx, pool, HostArea, HostMigrations); err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "cluster: host migrations: %v", err)
	}
	id := serverID()
	bus, err := events.JoinCluster(ctx, m.Bus, pool, events.ClusterOptions{Server: id, Log: m.Log.Named("cluster")})
	if err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "cluster: join the event bus: %v", err)
	}
	m.Log.Info("joined the cluster", "server", id, "store", pgmigrate.Redact(m.Store))
	return &Cluster{Pool: pool, bus: bus}, nil
}

// leave stops following and forwarding; the sessions this server served
// stay in the store for the others.
func (c *Cluster) leave() {
	if c == nil {
		return
	}
	c.bus.Leave()
	c.Pool.Close()
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

// StoreMigrations is the host's answer to `cairn migrate` for its own
// tables: with apply it applies the pending steps first, otherwise it only
// reads (creating nothing, so status runs before the first start).
func StoreMigrations(ctx context.Context, dsn string, apply bool) (pgmigrate.StoreStatus, error) {
	out := pgmigrate.StoreStatus{Store: "postgres", Status: pgmigrate.Status{Area: HostArea}}
	if !apply {
		st, err := pgmigrate.ReadAt(ctx, dsn, HostArea, HostMigrations)
		if err != nil {
			return out, errs.Newf(503, errs.Unavailable, "host tables at %s: %v", pgmigrate.Redact(dsn), err)
		}
		out.Status = st
		return out, nil
	}
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return out, errs.Newf(503, errs.Unavailable, "host tables at %s: %v", pgmigrate.Redact(dsn), err)
	}
	defer pool.Close()
	st, err := pgmigrate.Apply(ctx, pool, HostArea, HostMigrations)
	if err != nil {
		return out, errs.Newf(500, errs.InitFailed, "host migrations at %s: %v", pgmigrate.Redact(dsn), err)
	}
	out.Status = st
	return out, nil
}
