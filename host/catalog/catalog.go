// Package catalog is the host's tools and who sees them: the registry of
// every plugin's tools and the host's own, read through a client
// session's toolsets and mode (the rules are the client session's:
// clientsession.Visible, clientsession.Refusal; docs/decisions.md D21).
package catalog

import (
	"context"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/registry"
)

// Catalog holds the registered tools and the settings of sessions that
// bring none of their own.
type Catalog struct {
	reg *registry.Registry
	// defaultSettings holds the settings of client sessions whose
	// transport brings none of its own (stdio without a daemon, HTTP).
	defaultSettings *clientsession.Settings
}

// New is a catalog over reg; defaultSettings is the host's own session
// settings (clientsession.Default of its configuration).
func New(reg *registry.Registry, defaultSettings *clientsession.Settings) *Catalog {
	return &Catalog{reg: reg, defaultSettings: defaultSettings}
}

// Registry is the registry the catalog reads; plugins' tools are set and
// removed there.
func (c *Catalog) Registry() *registry.Registry { return c.reg }

// Get returns the registered tool name.
func (c *Catalog) Get(name string) (*registry.Tool, bool) { return c.reg.Get(name) }

// All lists every registered tool, visible or not.
func (c *Catalog) All() []*registry.Tool { return c.reg.List() }

// DefaultSessionSettings are the settings of client sessions whose
// transport brings none: the host's own, from its configuration.
func (c *Catalog) DefaultSessionSettings() *clientsession.Settings { return c.defaultSettings }

// SessionOf returns the settings of the client session running in ctx, or the
// host's own settings for a transport that carries none (HTTP).
func (c *Catalog) SessionOf(ctx context.Context) *clientsession.Settings {
	return clientsession.From(ctx, c.defaultSettings)
}
