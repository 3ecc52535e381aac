// Package catalog is the host's tools and who sees them: the registry of
// every plugin's tools and the host's own, read through a client
// session's toolsets and mode (the rules are the client session's:
// clientsession.Visible, clientsession.Refusal; docs/decisions.md D21).
package catalog

import (
	"context"
	"sync/atomic"
	"time"

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
	// starting is closed once every plugin has started (AwaitStart).
	starting atomic.Pointer[awaited]
}

// New is a catalog over reg; defaultSettings is the host's own session
// settings (clientsession.Default of its configuration).
func New(reg *registry.Registry, defaultSettings *clientsession.Settings) *Catalog {
	return &Catalog{reg: reg, defaultSettings: defaultSettings}
}

// Registry is the registry the catalog reads; plugins' tools are set and
// removed there.
func (c *Catalog) Registry() *registry.Registry { return c.reg }

// Get returns the registered tool name. While plugins are still starting
// after the first answer (AwaitStart), a name not registered yet waits for
// them, so a call to a tool of such a plugin runs rather than fails as
// unknown (docs/decisions.md D46).
func (c *Catalog) Get(name string) (*registry.Tool, bool) {
	if t, ok := c.reg.Get(name); ok {
		return t, true
	}
	if a := c.starting.Load(); a != nil {
		a.startNow()
		t := time.NewTimer(startWait)
		defer t.Stop()
		select {
		case <-a.started:
		case <-t.C:
		}
		return c.reg.Get(name)
	}
	return nil, false
}

// awaited is what AwaitStart was given.
type awaited struct {
	started  <-chan struct{}
	startNow func()
}

// startWait bounds Get's wait for plugins still starting: about a
// plugin start's own bound.
const startWait = time.Minute

// AwaitStart makes Get call startNow and wait for started to close before
// it answers that a tool is unknown.
func (c *Catalog) AwaitStart(started <-chan struct{}, startNow func()) {
	c.starting.Store(&awaited{started: started, startNow: startNow})
}

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
