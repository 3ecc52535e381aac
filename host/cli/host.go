package cli

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/mcpserver"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Host is one built cairn host as the commands drive it: its lifecycle and
// the parts they use. cmd/cairn builds it with the root package (host.New)
// and gives Main the builder, so this package never imports the root.
type Host struct {
	Lifecycle
	Server  *mcpserver.Server
	Fleet   *fleet.Fleet
	Catalog *catalog.Catalog
	System  *systemtools.Tools
	Bus     *events.Bus
	// Settings are the settings the host was built with.
	Settings config.Settings
}

// Lifecycle starts, reloads and stops a host.
type Lifecycle interface {
	Start(ctx context.Context) error
	Reload(ctx context.Context) error
	Shutdown(ctx context.Context)
}

// Wiring is what cmd/cairn gives the commands: the host's version and how
// to build a host.
type Wiring struct {
	Version string
	NewHost func(s config.Settings, log hclog.Logger) (*Host, error)
}

// wiring is Main's; the commands read it.
var wiring Wiring

// newHost builds a host with the command's logger.
func newHost(s config.Settings) (*Host, error) {
	h, err := wiring.NewHost(s, newLogger(s))
	if err != nil {
		return nil, err
	}
	h.Settings = s
	return h, nil
}

// dashboardBackend is what the dashboard reads of a host (ui.Backend).
type dashboardBackend struct{ h *Host }

func (b dashboardBackend) Call(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	return b.h.Server.Call(ctx, name, args, c)
}

func (b dashboardBackend) CallInternal(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	return b.h.Server.CallInternal(ctx, name, args, c)
}

func (b dashboardBackend) Bus() *events.Bus { return b.h.Bus }

func (b dashboardBackend) Health(ctx context.Context) systemtools.HealthOutput {
	return b.h.System.Health(ctx)
}
