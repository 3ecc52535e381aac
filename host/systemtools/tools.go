// Package systemtools is the host's own tools, server_ping and
// server_health: their schemas, their handlers and the health report the
// dashboard and `cairn plugins` read too. The pipeline's last stage runs
// them (Tools.Call) where it would dispatch a plugin's tool.
package systemtools

import (
	"time"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/pipeline"
)

// Config is what the host's tools report on.
type Config struct {
	// Version of the host.
	Version string
	Catalog *catalog.Catalog
	Fleet   *fleet.Fleet
	// Pipeline names its stages; Metrics counts its calls.
	Pipeline *pipeline.Pipeline
	Metrics  *pipeline.Metrics
	Bus      *events.Bus
	// Started is when the host started, for the uptime.
	Started time.Time
}

// Tools runs the host's own tools.
type Tools struct {
	version string
	catalog *catalog.Catalog
	fleet   *fleet.Fleet
	pipe    *pipeline.Pipeline
	metrics *pipeline.Metrics
	bus     *events.Bus
	started time.Time
}

// New is the host's own tools over c.
func New(c Config) *Tools {
	return &Tools{version: c.Version, catalog: c.Catalog, fleet: c.Fleet, pipe: c.Pipeline, metrics: c.Metrics, bus: c.Bus, started: c.Started}
}
