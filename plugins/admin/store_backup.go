package admin

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Store tools for `cairn store check`, `cairn backup` and `cairn restore`:
// the admin area checks and copies admin.db inside the process holding it
// (one read transaction), or, in a command's host that opened nothing, the
// file at rest.

func (a *Area) liveStore() *store.Store {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.st
}

// onLive runs fn on the bbolt handle of the store this process serves,
// when it is the file at path; ran is false otherwise (PostgreSQL
// included, reported by kind "postgres").
func (a *Area) onLive(path string, fn func(db *bolt.DB) error) (ran bool, kind string, err error) {
	st := a.liveStore()
	if st == nil {
		return false, "", nil
	}
	d := st.Describe()
	if d.Kind == "postgres" {
		return false, "postgres", nil
	}
	if !sameFile(d.Location, path) {
		return false, "", nil
	}
	ok, err := st.WithBolt(fn)
	return ok, d.Kind, err
}

func (a *Area) storeCheckTool() {
	sdk.AddTool(a.p, sdk.Tool[boltcheck.CheckInput, boltcheck.AreaReport]{
		Name: "admin_store_check", Title: "Check the admin store", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): checks the admin store (admin.db) of the directory from: every page and bbolt's own consistency check, then that every bucket is there, the schema version is readable, every record decodes and every hash index points at a record. Answers every problem found.",
		Handler: func(ctx context.Context, in boltcheck.CheckInput) (boltcheck.AreaReport, error) {
			if err := requireOperator(actor(ctx), "", "admin_store_check (cairn store check)"); err != nil {
				return boltcheck.AreaReport{}, err
			}
			if err := in.Check(); err != nil {
				return boltcheck.AreaReport{}, err
			}
			path := filepath.Join(in.From, store.FileName)
			var rep boltcheck.AreaReport
			ran, kind, err := a.onLive(path, func(db *bolt.DB) error {
				var err error
				rep, err = boltcheck.CheckLive("admin", db, store.Consistency(path))
				return err
			})
			if kind == "postgres" {
				return boltcheck.AreaReport{Area: "admin", Kind: "postgres", File: a.liveStore().Path(), Found: true, Live: true, Problems: []boltcheck.Problem{}}, nil
			}
			if ran {
				return rep, err
			}
			rep, err = boltcheck.CheckFile("admin", path, store.Consistency(path))
			if errors.Is(err, boltcheck.ErrLocked) {
				return rep, errs.Newf(409, errs.Conflict, "%s is held by another cairn process; stop it, or run the command while its daemon serves", path)
			}
			return rep, err
		},
	})
}

func (a *Area) storeBackupTool() {
	sdk.AddTool(a.p, sdk.Tool[boltcheck.BackupInput, boltcheck.BackedUp]{
		Name: "admin_store_backup", Title: "Back up the admin store", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): writes a consistent copy of the admin store into the directory to as admin.db (bbolt's transactional copy in one read transaction). On PostgreSQL it copies nothing and answers the tables to dump.",
		Handler: func(ctx context.Context, in boltcheck.BackupInput) (boltcheck.BackedUp, error) {
			out := boltcheck.BackedUp{Area: "admin", Kind: "bbolt"}
			if err := requireOperator(actor(ctx), "", "admin_store_backup (cairn backup)"); err != nil {
				return out, err
			}
			if err := in.Check(); err != nil {
				return out, err
			}
			if err := os.MkdirAll(in.To, 0o700); err != nil {
				return out, err
			}
			path := filepath.Join(a.p.Config().DataDir, store.FileName)
			dst := filepath.Join(in.To, store.FileName)
			copyOf := func(db *bolt.DB) error {
				cp, err := boltcheck.Snapshot(db, dst)
				out.File, out.Copied, out.SchemaVersion = store.FileName, cp, store.SchemaVersion
				return err
			}
			ran, kind, err := a.onLive(path, copyOf)
			switch {
			case kind == "postgres":
				out.Kind, out.Tables = "postgres", store.PostgresTables()
				out.Guidance = "the admin area keeps its state in PostgreSQL; back up its tables with pg_dump"
				return out, nil
			case ran:
				return out, err
			}
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				return out, nil
			}
			db, _, err := boltcheck.OpenReadOnly(path)
			if errors.Is(err, boltcheck.ErrLocked) {
				return out, errs.Newf(409, errs.Conflict, "%s is held by another cairn process; stop it, or run `cairn backup` while its daemon serves", path)
			}
			if err != nil {
				return out, errs.Newf(500, errs.Internal, "%v", err)
			}
			defer db.Close()
			return out, copyOf(db)
		},
	})
}

func (a *Area) storeRestoreTool() {
	sdk.AddTool(a.p, sdk.Tool[boltcheck.RestoreInput, boltcheck.Restored]{
		Name: "admin_store_restore", Title: "Restore the admin store", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): puts the admin.db of the checked backup directory from in place of the data dir to's, atomically (written beside, renamed over; the replaced file is kept as admin.db.pre-restore-<time>). Refused by a process serving the store.",
		Handler: func(ctx context.Context, in boltcheck.RestoreInput) (boltcheck.Restored, error) {
			out := boltcheck.Restored{Area: "admin"}
			if err := requireOperator(actor(ctx), "", "admin_store_restore (cairn restore)"); err != nil {
				return out, err
			}
			if err := in.Check(); err != nil {
				return out, err
			}
			if a.liveStore() != nil {
				return out, errs.Newf(409, errs.Conflict, "this cairn serves the admin store; `cairn restore` runs only while no server holds the data dir")
			}
			out, err := boltcheck.RestoreFile(in.From, in.To, store.FileName, true)
			out.Area = "admin"
			return out, err
		},
	})
}

// sameFile reports whether a and b name one file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
