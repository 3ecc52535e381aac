package engine

import (
	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A state file that vanished — missing, or left empty by a crashed copy or
// a full disk — while the data dir has held it stops the start instead of
// starting an empty state (docs/decisions.md D42). The file is listed in
// the data dir's inventory of held stores once written or read whole; the
// state in PostgreSQL is no file and is not listed.

// refuseVanished is an ERR_INIT_FAILED naming the state file and the
// commands to run when the file, missing or empty, is one the data dir has
// held. The caller holds e.mu.
func (e *Engine) refuseVanished() error {
	err := heldstores.Check(e.dataDir, stateRel)
	if err == nil {
		return nil
	}
	return errs.New(500, errs.InitFailed, err.Error())
}

// noteHeld lists the state file in the data dir's inventory, once per
// engine. A failure is warned about and tried again at the next write: the
// state itself was written. The caller holds e.mu.
func (e *Engine) noteHeld() {
	if e.held || e.pg != nil {
		return
	}
	if err := heldstores.Record(e.dataDir, stateRel); err != nil {
		e.warn("the SDD state file is not listed as held; a later loss of it would start an empty state", "error", err)
		return
	}
	e.held = true
}
