package host

import (
	"context"

	"github.com/cairn-mcp/cairn/host/internal/datadir"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Start launches every plugin in parallel and registers their tools. A
// required plugin that cannot start, or two plugins claiming one tool name,
// is an ERR_INIT_FAILED error; an optional plugin that fails is reported in
// server_health and `cairn plugins`.
//
// A host that serves one session (config.Settings.OneSession) returns once
// the plugins that session's toolsets need are up; the others start
// meanwhile, and their tools arrive with tools/list_changed
// (fleet.Fleet.StartFirst; docs/decisions.md D46).
func (h *Host) Start(ctx context.Context) error {
	for _, w := range h.cfg.Warnings {
		h.log.Warn(w)
	}
	// A .cairn it creates is git-ignored (docs/decisions.md D41).
	if err := datadir.Make(h.cfg.DataDir, 0o700); err != nil {
		return errs.Newf(500, errs.InitFailed, "cannot create the data directory %s: %v", h.cfg.DataDir, err)
	}
	start := h.Fleet.Start
	if h.cfg.OneSession {
		start = func(ctx context.Context) error {
			return h.Fleet.StartFirst(ctx, h.Catalog.DefaultSessionSettings().Toolsets)
		}
	}
	if err := start(ctx); err != nil {
		h.Shutdown(context.Background())
		return err
	}
	h.Catalog.AwaitStart(h.Fleet.Started(), h.Fleet.StartLater)
	h.Catalog.CheckToolsets(h.log)
	h.Fleet.GoLive()
	hs := h.Catalog.DefaultSessionSettings()
	h.log.Info("cairn ready", "tools", len(h.Catalog.VisibleTools()), "plugins", len(h.Fleet.Processes()), "mode", hs.Mode, "toolsets", hs.Toolsets.String())
	return nil
}

// Reload re-reads the config file and restarts the plugins whose binary or
// settings changed, starts new ones and stops removed ones (SIGHUP).
func (h *Host) Reload(ctx context.Context) error { return h.Fleet.Reload(ctx) }

// Shutdown stops every plugin, in parallel.
func (h *Host) Shutdown(ctx context.Context) {
	h.Server.StopWatching()
	h.Fleet.Stop(ctx)
}
