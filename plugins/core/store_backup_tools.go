package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Store tools for `cairn store check`, `cairn backup` and `cairn restore`:
// the host never opens the core store, it asks the core area, which checks
// and copies the store it holds (inside its own process, on one read
// transaction) or, in a command's host that holds nothing, the file
// itself.

// postgresTables are the core area's tables on PostgreSQL, for the backup
// guidance.
var postgresTables = []string{store.Table}

// liveStore is the store this process serves from; nil in a command's host
// that opened none.
func (c *Area) liveStore() *store.Store {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.store
}

// chainProblems verifies the chains and frozen roots of an open bbolt
// file (a copy or a store at rest), naming file in the problems.
func chainProblems(file string) func(db *bolt.DB) ([]boltcheck.Problem, map[string]int, error) {
	return func(db *bolt.DB) ([]boltcheck.Problem, map[string]int, error) {
		st, err := store.OnBolt(db)
		if err != nil {
			return []boltcheck.Problem{{File: file, Bucket: store.BucketMeta, Damage: err.Error()}}, nil, nil
		}
		return audit.New(st, audit.Config{}).StoreProblems(file)
	}
}

func (c *Area) storeCheckTool() {
	sdk.AddTool(c.p, sdk.Tool[boltcheck.CheckInput, boltcheck.AreaReport]{
		Name: "core_store_check", Title: "Check the core store", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): checks the core store (core.db) of the directory from: every page (meta, freelist, branch, leaf) and bbolt's own consistency check, then every task's thought and event chain and every frozen Merkle root. The store this process serves is checked on a copy taken in one read transaction. Answers every problem found, naming file, page, bucket and record.",
		Handler: func(ctx context.Context, in boltcheck.CheckInput) (boltcheck.AreaReport, error) {
			if err := in.Check(); err != nil {
				return boltcheck.AreaReport{}, err
			}
			path := filepath.Join(in.From, store.FileName)
			if st := c.liveStore(); st != nil {
				switch d := st.Describe(); {
				case d.Kind == "postgres":
					ps, counts, err := audit.New(st, audit.Config{}).StoreProblems(d.Location)
					if ps == nil {
						ps = []boltcheck.Problem{}
					}
					return boltcheck.AreaReport{Area: "core", Kind: "postgres", File: d.Location, Found: true, Live: true, Counts: counts, Problems: ps}, err
				case sameFile(d.Location, path):
					// The check reads the file: the journal's commits go
					// into it first.
					if err := st.Checkpoint(); err != nil {
						return boltcheck.AreaReport{Area: "core"}, errs.Newf(500, errs.Internal, "checkpoint %s before the check: %v", path, err)
					}
					rep, err := boltcheck.CheckLive("core", st.DB(), chainProblems(path))
					// The copy has fresh meta pages: what the file's own
					// showed at open is reported as found then.
					for _, w := range st.Warnings() {
						w.Area, w.Damage = "core", "at open: "+w.Damage
						rep.Problems = append(rep.Problems, w)
					}
					return rep, err
				}
			}
			if err := store.Settle(path); err != nil {
				return boltcheck.AreaReport{Area: "core"}, err
			}
			rep, err := boltcheck.CheckFile("core", path, chainProblems(path))
			if errors.Is(err, boltcheck.ErrLocked) {
				return rep, heldElsewhere(path)
			}
			return rep, err
		},
	})
}

func (c *Area) storeBackupTool() {
	sdk.AddTool(c.p, sdk.Tool[boltcheck.BackupInput, boltcheck.BackedUp]{
		Name: "core_store_backup", Title: "Back up the core store", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): writes a consistent copy of the core store into the directory to as core.db, with bbolt's transactional copy inside one read transaction (writers go on meanwhile; the copy holds exactly the commits before it began). On PostgreSQL it copies nothing and answers the tables to dump.",
		Handler: func(ctx context.Context, in boltcheck.BackupInput) (boltcheck.BackedUp, error) {
			out := boltcheck.BackedUp{Area: "core", Kind: "bbolt"}
			if err := in.Check(); err != nil {
				return out, err
			}
			dst := filepath.Join(in.To, store.FileName)
			st := c.liveStore()
			if st == nil {
				// A command's host: the data dir's file, at rest.
				dataDir := c.p.Config().DataDir
				path := filepath.Join(dataDir, store.FileName)
				if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
					out.Kind = "bbolt"
					return out, nil
				}
				if err := store.Settle(path); err != nil {
					return out, err
				}
				db, err := openAtRest(path)
				if err != nil {
					return out, err
				}
				defer db.Close()
				if st, err = store.OnBolt(db); err != nil {
					return out, err
				}
			} else if st.Describe().Kind == "postgres" {
				out.Kind, out.Tables = "postgres", postgresTables
				out.Guidance = "the core area keeps its state in PostgreSQL table " + store.Table + "; back it up with pg_dump"
				return out, nil
			}
			if err := os.MkdirAll(in.To, 0o700); err != nil {
				return out, err
			}
			if err := st.Checkpoint(); err != nil {
				return out, errs.Newf(500, errs.Internal, "checkpoint %s before the copy: %v", st.Path(), err)
			}
			cp, err := boltcheck.Snapshot(st.DB(), dst)
			if err != nil {
				return out, errs.Newf(500, errs.Internal, "copy %s into %s: %v", st.Path(), dst, err)
			}
			out.File, out.Copied, out.SchemaVersion = store.FileName, cp, st.UserVersion()
			return out, nil
		},
	})
}

func (c *Area) storeRestoreTool() {
	sdk.AddTool(c.p, sdk.Tool[boltcheck.RestoreInput, boltcheck.Restored]{
		Name: "core_store_restore", Title: "Restore the core store", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): puts the core.db of the checked backup directory from in place of the data dir to's, atomically (written beside, renamed over; the replaced file is kept as core.db.pre-restore-<time>). Refused by a process serving the store, and when another process holds the file.",
		Handler: func(ctx context.Context, in boltcheck.RestoreInput) (boltcheck.Restored, error) {
			if err := in.Check(); err != nil {
				return boltcheck.Restored{Area: "core"}, err
			}
			if c.liveStore() != nil {
				return boltcheck.Restored{Area: "core"}, errs.Newf(409, errs.Conflict, "this cairn serves the core store; `cairn restore` runs only while no server holds the data dir")
			}
			// The journal beside the replaced file follows that file, not
			// the restored one: its commits go into the replaced file
			// (kept beside), then it goes.
			live := filepath.Join(in.To, store.FileName)
			if err := store.Settle(live); err != nil {
				return boltcheck.Restored{Area: "core"}, err
			}
			if err := kv.RemoveJournal(live); err != nil {
				return boltcheck.Restored{Area: "core"}, errs.Newf(500, errs.Internal, "remove the journal of %s: %v", live, err)
			}
			out, err := boltcheck.RestoreFile(in.From, in.To, store.FileName, true)
			out.Area = "core"
			return out, err
		},
	})
}

// openAtRest opens a store file no process serves, read-only, after
// checking its pages.
func openAtRest(path string) (*bolt.DB, error) {
	db, _, err := boltcheck.OpenReadOnly(path)
	if errors.Is(err, boltcheck.ErrLocked) {
		return nil, heldElsewhere(path)
	}
	var damaged *boltcheck.DamagedError
	if errors.As(err, &damaged) {
		return nil, errs.Newf(500, errs.Internal, "%s", damaged.Error())
	}
	return db, err
}

func heldElsewhere(path string) error {
	return errs.Newf(409, errs.Conflict, "%s is held by a running cairn that does not answer commands (a server started with --no-daemon or `serve --http` without the daemon); stop it, or run the command while its daemon serves", path)
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
