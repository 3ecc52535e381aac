package sdd

import (
	"context"
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Store tools for `cairn store check`, `cairn backup` and `cairn restore`:
// the SDD area checks and copies its own state document.

func (s *Area) liveEngine() *engine.Engine {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.eng
}

func (s *Area) storeCheckTool() {
	sdk.AddTool(s.p, sdk.Tool[boltcheck.CheckInput, boltcheck.AreaReport]{
		Name: "sdd_store_check", Title: "Check the SDD state", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): checks the SDD state document (state/sdd-state.json) of the directory from: it parses, carries a schema version this build reads and decodes into the state's schema. Answers every problem found.",
		Handler: func(ctx context.Context, in boltcheck.CheckInput) (boltcheck.AreaReport, error) {
			if err := in.Check(); err != nil {
				return boltcheck.AreaReport{}, err
			}
			if e := s.liveEngine(); e != nil && (e.IsPostgres() || filepath.Clean(e.DataDir()) == filepath.Clean(in.From)) {
				st, err := e.Check()
				return report(st, true), err
			}
			return report(engine.CheckStateFile(in.From), false), nil
		},
	})
}

func (s *Area) storeBackupTool() {
	sdk.AddTool(s.p, sdk.Tool[boltcheck.BackupInput, boltcheck.BackedUp]{
		Name: "sdd_store_backup", Title: "Back up the SDD state", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): copies the SDD state document into the directory to as state/sdd-state.json, under the engine's lock so no write lands halfway, written beside and renamed. On PostgreSQL it copies nothing and answers the table to dump.",
		Handler: func(ctx context.Context, in boltcheck.BackupInput) (boltcheck.BackedUp, error) {
			out := boltcheck.BackedUp{Area: "sdd", Kind: "file"}
			if err := in.Check(); err != nil {
				return out, err
			}
			e := s.liveEngine()
			if e != nil && e.IsPostgres() {
				out.Kind, out.Tables = "postgres", []string{engine.PostgresTable}
				out.Guidance = "the sdd area keeps its state in PostgreSQL table " + engine.PostgresTable + "; back it up with pg_dump"
				return out, nil
			}
			dataDir := s.p.Config().DataDir
			if e != nil {
				dataDir = e.DataDir()
			}
			n, sum, ok, err := engine.BackupState(e, dataDir, in.To)
			if err != nil {
				return out, errs.Newf(500, errs.Internal, "copy the SDD state: %v", err)
			}
			if ok {
				out.File, out.Bytes, out.SHA256, out.SchemaVersion = engine.StateFile, int64(n), sum, 1
			}
			return out, nil
		},
	})
}

func (s *Area) storeRestoreTool() {
	sdk.AddTool(s.p, sdk.Tool[boltcheck.RestoreInput, boltcheck.Restored]{
		Name: "sdd_store_restore", Title: "Restore the SDD state", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): puts the state/sdd-state.json of the checked backup directory from in place of the data dir to's, atomically (written beside, renamed over; the replaced file is kept beside it). Refused by a process serving the state.",
		Handler: func(ctx context.Context, in boltcheck.RestoreInput) (boltcheck.Restored, error) {
			out := boltcheck.Restored{Area: "sdd"}
			if err := in.Check(); err != nil {
				return out, err
			}
			if s.liveEngine() != nil {
				return out, errs.Newf(409, errs.Conflict, "this cairn serves the SDD state; `cairn restore` runs only while no server holds the data dir")
			}
			out, err := boltcheck.RestoreFile(in.From, in.To, engine.StateFile, false)
			out.Area = "sdd"
			return out, err
		},
	})
}

// report presents the engine's check as the area report `cairn store
// check` prints.
func report(st engine.StateReport, live bool) boltcheck.AreaReport {
	rep := boltcheck.AreaReport{Area: "sdd", Kind: "file", File: st.File, Found: st.Found, Live: live, Problems: []boltcheck.Problem{}}
	if st.Postgres {
		rep.Kind = "postgres"
	}
	if st.Found {
		rep.Counts = map[string]int{"bytes": st.Bytes}
	}
	for _, p := range st.Problems {
		rep.Problems = append(rep.Problems, boltcheck.Problem{Area: "sdd", File: st.File, Record: p.Record, Damage: p.Damage, Fatal: p.Fatal})
	}
	return rep
}
