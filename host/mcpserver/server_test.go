package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// newMinimalServer wires a server as the host does for a MINIMAL host,
// which starts no plugin: the host's own tools only.
func newMinimalServer(t *testing.T) *Server {
	t.Helper()
	cfg := config.Settings{Root: t.TempDir(), Mode: config.ModeMinimal}
	log := hclog.NewNullLogger()
	bus := events.New(log)
	reg, metrics := registry.New(), pipeline.NewMetrics()
	cat := catalog.New(reg, clientsession.Default(cfg))
	fl := fleet.New(cfg, fleet.Options{Executable: "/nonexistent", Logger: log, Bus: bus, Registry: reg})
	var srv *Server
	pipe := pipeline.New(func(ctx context.Context, c *pipeline.Call) *seam.Result { return srv.Dispatch(ctx, c) },
		pipeline.Filter(cat.Refuse), metrics.Stage())
	sys := systemtools.New(systemtools.Config{Catalog: cat, Fleet: fl, Pipeline: pipe, Metrics: metrics, Bus: bus, Started: time.Now()})
	srv = New(Config{Logger: log, Bus: bus, Catalog: cat, Fleet: fl, System: sys, Pipeline: pipe})
	fl.Listen(srv)
	if err := systemtools.Register(reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.StopWatching)
	return srv
}
