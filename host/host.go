// Package host is the cairn plugin host: it only wires. New builds the
// parts and connects them along the path of a call: a transport
// (host/transport/stdio, host/transport/httpserve) reads a message and
// opens its client session (host/clientsession); the MCP glue
// (host/mcpserver) turns a tools/call into a pipeline call
// (host/pipeline), whose filter is the catalog's (host/catalog); the
// pipeline's last stage runs the host's own tools (host/systemtools) or
// dispatches to a plugin process of the fleet (host/fleet), which
// host/supervisor runs through the one seam to the protocol (sdk/seam,
// sdk/hostconn). Start, Reload and Shutdown drive the fleet.
package host

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/cluster"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/mcpserver"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Version is the host version, set at build time with
// -ldflags "-X github.com/cairn-mcp/cairn/host.Version=...".
var Version = "0.1.0-dev"

// Options are the host's non-configuration inputs.
type Options struct {
	// Version of the host.
	Version string
	// Executable is the cairn binary re-executed for built-in areas.
	Executable string
	Logger     hclog.Logger
}

// Host is one running cairn host: the parts New wired, which the commands
// use directly (their methods are theirs, not the Host's).
type Host struct {
	// Server serves MCP sessions and runs calls.
	Server *mcpserver.Server
	// Fleet is the supervised plugins.
	Fleet *fleet.Fleet
	// Catalog is the registered tools and who sees them.
	Catalog *catalog.Catalog
	// System is the host's own tools and its health report.
	System *systemtools.Tools
	// Bus carries the plugins' and the host's events.
	Bus *events.Bus

	cfg config.Settings
	log hclog.Logger
}

// New prepares a host; Start launches the plugins.
func New(cfg config.Settings, opts Options) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "cairn", Output: os.Stderr, Level: hclog.Info})
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, errs.Newf(500, errs.InitFailed, "cannot locate the cairn executable to start built-in plugins: %v", err)
		}
		opts.Executable = exe
	}
	log := opts.Logger
	lim, err := clientsession.LoadLimits(os.Getenv)
	if err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, log: log, Bus: events.New(log.Named("events"))}
	reg, metrics := registry.New(), pipeline.NewMetrics()
	h.Catalog = catalog.New(reg, clientsession.Default(cfg))
	h.Fleet = fleet.New(cfg, fleet.Options{Version: opts.Version, Executable: opts.Executable, Logger: log, Bus: h.Bus, Registry: reg})
	// The pipeline's last stage is the server's: the host's own tools run
	// there, everything else goes to its plugin.
	pipe := pipeline.New(func(ctx context.Context, c *pipeline.Call) *seam.Result { return h.Server.Dispatch(ctx, c) },
		pipeline.Recover(log),
		pipeline.Identify(cfg.AgentID),
		pipeline.Authorize(),
		pipeline.Filter(h.Catalog.Refuse),
		pipeline.Audit(log.Named("audit")),
		metrics.Stage(),
	)
	h.System = systemtools.New(systemtools.Config{Version: opts.Version, Catalog: h.Catalog, Fleet: h.Fleet,
		Pipeline: pipe, Metrics: metrics, Bus: h.Bus, Started: time.Now()})
	h.Server = mcpserver.New(mcpserver.Config{
		Version: opts.Version, Logger: log, Bus: h.Bus, Catalog: h.Catalog, Fleet: h.Fleet, System: h.System, Pipeline: pipe,
		Cluster: &cluster.Membership{Store: cfg.Store, Local: cfg.TempDataDir, Bus: h.Bus, Log: log},
		Limits:  lim,
	})
	h.Fleet.Listen(h.Server)
	if err := systemtools.Register(reg); err != nil {
		return nil, err
	}
	return h, nil
}
