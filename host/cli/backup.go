package cli

// `cairn store check`, `cairn backup DIR` and `cairn restore DIR`. The host
// never opens an area's store (docs/decisions.md D22): each area checks,
// copies and restores its own through internal tools, inside the daemon
// that holds the stores when one serves the data dir (the copy is then
// taken in one read transaction while writers go on), or in a command host
// of its own whose areas open nothing but the files they are asked about.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newBackup); register(newRestore) }

// storeAreas are the areas whose stores check, backup and restore cover,
// in order. Core goes first: every server holds core.db, so its refusal
// (held by a server) stops a restore before anything moved.
var storeAreas = []string{"core", "admin", "sdd"}

// manifestName is the backup's manifest file.
const manifestName = "manifest.json"

// backupFormat names the layout of a backup dir.
const backupFormat = "cairn-backup/1"

// Manifest describes a backup: what each file is and its sha256.
type Manifest struct {
	Format       string               `json:"format"`
	CairnVersion string               `json:"cairn_version"`
	CreatedAt    string               `json:"created_at"`
	DataDir      string               `json:"data_dir"`
	Store        string               `json:"store"`
	ViaDaemon    bool                 `json:"via_daemon"`
	Areas        []boltcheck.BackedUp `json:"areas"`
}

// CheckReport is what `cairn store check` prints.
type CheckReport struct {
	DataDir  string                 `json:"data_dir"`
	OK       bool                   `json:"ok"`
	Areas    []boltcheck.AreaReport `json:"areas"`
	Problems []string               `json:"problems"`
}

// storeClient opens the areas' store tools: through the daemon when one
// serves the data dir (unless local), else in a command host of its own
// whose areas open no store (each tool opens the file it is asked about).
func storeClient(ctx context.Context, configFile string, local bool) (*areaClient, error) {
	s, cleanup, err := settings(configFile)
	if err != nil {
		return nil, err
	}
	c := &areaClient{s: s, paths: daemon.PathsFor(s.DataDir), closeFn: cleanup}
	if !local && !s.TempDataDir && daemonListens(c.paths) {
		return c, nil
	}
	h, shutdown, err := startHost(ctx, configFile, func(cs *config.Settings) {
		*cs = s
		onlyAreas(cs, storeAreas)
		for _, n := range storeAreas {
			cs.File.Plugins[n].Settings[pgmigrate.ReadOnlySetting] = pgmigrate.ReadOnly
		}
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	c.h, c.closeFn = h, func() { shutdown(); cleanup() }
	return c, nil
}

// checkStores runs every area's check of the stores in dir.
func checkStores(ctx context.Context, c *areaClient, dir string) (CheckReport, error) {
	rep := CheckReport{DataDir: dir, OK: true, Areas: []boltcheck.AreaReport{}, Problems: []string{}}
	for _, a := range storeAreas {
		var ar boltcheck.AreaReport
		if _, err := c.call(ctx, a+"_store_check", boltcheck.CheckInput{From: dir}, &ar); err != nil {
			e := errs.From(err)
			if c.viaDaemon() && e.Code == errs.NotFound {
				// The daemon runs without this area (it failed to start):
				// its store is nobody's, so check the file at rest.
				return rep, errAreaNotServed
			}
			return rep, errs.New(e.Status, e.Code, "the "+a+" area did not check its store: "+e.Message)
		}
		for _, p := range ar.Problems {
			rep.Problems = append(rep.Problems, a+": "+p.String())
		}
		rep.Areas = append(rep.Areas, ar)
	}
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

var errAreaNotServed = errors.New("an area does not run in the daemon")

// runCheck checks the configured data dir, through the daemon when one
// serves it.
func runCheck(ctx context.Context, configFile string) (CheckReport, error) {
	c, err := storeClient(ctx, configFile, false)
	if err != nil {
		return CheckReport{}, err
	}
	rep, err := checkStores(ctx, c, c.s.DataDir)
	c.close()
	if errors.Is(err, errAreaNotServed) {
		// An area the daemon lacks holds no file: check every store
		// here instead (the ones the daemon holds are refused as held,
		// and the daemon would not run without core).
		if c, err = storeClient(ctx, configFile, true); err != nil {
			return rep, err
		}
		defer c.close()
		return checkStores(ctx, c, c.s.DataDir)
	}
	return rep, err
}

// printCheck writes the report: JSON, or one line per problem.
func printCheck(w io.Writer, rep CheckReport, asJSON bool) error {
	if asJSON {
		return writeJSON(w, rep)
	}
	for _, a := range rep.Areas {
		state := "ok"
		switch {
		case len(a.Problems) > 0:
			// A store the data dir held and lacks is found nowhere, and
			// is a problem (docs/decisions.md D42).
			state = fmt.Sprintf("%d problem(s)", len(a.Problems))
		case !a.Found:
			state = "nothing stored"
		}
		var counts []string
		for k, v := range a.Counts {
			counts = append(counts, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(counts)
		if a.Layout != nil {
			counts = append([]string{fmt.Sprintf("pages=%d", a.Layout.Pages)}, counts...)
		}
		fmt.Fprintf(w, "%-6s %-8s %s: %s %s\n", a.Area, a.Kind, a.File, state, strings.Join(counts, " "))
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "PROBLEM %s\n", p)
	}
	return nil
}

func newStoreCheck() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Verify every store of the data dir: pages, chains, frozen Merkle roots, the admin store and the SDD state",
		Long: `Verifies every store of the data dir: core.db and admin.db page by page
(meta, freelist, branch and leaf pages, then bbolt's own consistency check),
every task's thought and event chain and every frozen Merkle root of the core
store, the admin store's buckets, records and indexes, and the SDD state
document (it parses and matches its schema). Each problem names the store,
the file, the page, bucket or record, and the damage. When a daemon serves
the data dir the areas check the stores they hold, on a copy taken in one
read transaction; otherwise the files are read at rest. Exits 1 when
anything is wrong.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := runCheck(cmd.Context(), configFile)
			if err != nil {
				return err
			}
			if err := printCheck(cmd.OutOrStdout(), rep, asJSON); err != nil {
				return err
			}
			if !rep.OK {
				return errs.Newf(500, errs.Internal, "%d problem(s) in the stores of %s; restore a backup with `cairn restore <backup dir>`", len(rep.Problems), rep.DataDir)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newBackup() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "backup DIR",
		Short: "Write a consistent snapshot of every store into DIR, with a manifest; safe while cairn serves",
		Long: `Writes a consistent copy of every store of the data dir into DIR (created;
it must be empty): core.db and admin.db with bbolt's transactional copy, each
taken in one read transaction inside the process that holds it (the daemon
when one serves, so writers go on meanwhile and the copy holds exactly the
commits before it began), and state/sdd-state.json copied under the SDD
engine's lock. Then every copy is checked as ` + "`cairn store check`" + ` would, and
DIR/manifest.json records the versions and the sha256 of each file.
On PostgreSQL (CAIRN_STORE=postgres://…) nothing is copied: the command
prints which tables to dump with pg_dump.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return errs.Invalidf("dir", "path", "%q: %v", args[0], err)
			}
			if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
				return errs.Invalidf("dir", "empty", "%s is not empty: a backup goes into a new or empty directory", dir)
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return errs.Invalidf("dir", "writable", "cannot create %s: %v", dir, err)
			}
			c, err := storeClient(cmd.Context(), configFile, false)
			if err != nil {
				return err
			}
			defer c.close()
			man := Manifest{Format: backupFormat, CairnVersion: wiring.Version, CreatedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
				DataDir: c.s.DataDir, Store: "bbolt", ViaDaemon: c.viaDaemon()}
			var guidance []string
			for _, a := range storeAreas {
				var b boltcheck.BackedUp
				if _, err := c.call(cmd.Context(), a+"_store_backup", boltcheck.BackupInput{To: dir}, &b); err != nil {
					e := errs.From(err)
					return errs.New(e.Status, e.Code, "the "+a+" area did not back up its store: "+e.Message)
				}
				if b.Kind == "postgres" {
					man.Store = "postgres"
					guidance = append(guidance, b.Tables...)
				}
				man.Areas = append(man.Areas, b)
			}
			if man.Store == "postgres" {
				_ = os.Remove(dir)
				return printPostgresGuidance(cmd.OutOrStdout(), guidance)
			}
			// The copies are checked where they lie, at rest.
			rep, err := checkStores(cmd.Context(), c, dir)
			if err != nil {
				return err
			}
			if !rep.OK {
				return errs.Newf(500, errs.Internal, "the backup in %s does not check: %s", dir, strings.Join(rep.Problems, "; "))
			}
			if _, err := boltcheck.WriteFileAtomic(filepath.Join(dir, manifestName), func(w io.Writer) error { return writeJSON(w, man) }); err != nil {
				return err
			}
			return writeJSON(cmd.OutOrStdout(), man)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	return cmd
}

// printPostgresGuidance says how to back up a PostgreSQL store.
func printPostgresGuidance(w io.Writer, tables []string) error {
	tables = append(tables, "cairn_migrations", "cairn_bus_events", "cairn_http_sessions")
	var flags []string
	for _, t := range tables {
		flags = append(flags, "-t "+t)
	}
	_, err := fmt.Fprintf(w, `The stores are in PostgreSQL (CAIRN_STORE): cairn copies no file. Back them up with
PostgreSQL's own tools, every cairn table in one consistent dump (pg_dump runs in
one transaction, so servers may keep writing):

  pg_dump --format=custom %s "$CAIRN_STORE" > cairn.dump

and restore into an empty database with pg_restore --dbname=<url> cairn.dump,
then run `+"`cairn migrate status`"+` and `+"`cairn store check`"+` against it.
Tables: %s (all in the URL's schema; see docs/deploy.md).
`, strings.Join(flags, " "), strings.Join(tables, ", "))
	return err
}

// readManifest reads and verifies a backup's manifest: format, and every
// file's size and sha256.
func readManifest(dir string) (Manifest, error) {
	var man Manifest
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := os.Stat(dir); serr != nil {
			return man, errs.NotFoundf(errs.NotFound, "dir", "no backup at %s: give the directory `cairn backup DIR` wrote", dir)
		}
		return man, errs.Invalidf("dir", "backup", "%s is not a cairn backup (it has no %s): give the directory `cairn backup DIR` wrote", dir, manifestName)
	case err != nil:
		return man, errs.Invalidf("dir", "backup", "cannot read the backup %s: %v", dir, err)
	}
	if err := json.Unmarshal(raw, &man); err != nil || man.Format != backupFormat {
		return man, errs.Invalidf("dir", "backup", "%s/%s is not a %s manifest (%v)", dir, manifestName, backupFormat, err)
	}
	if man.Store != "bbolt" {
		return man, errs.Invalidf("dir", "backup", "%s holds no files to restore (its store was %s)", dir, man.Store)
	}
	for _, a := range man.Areas {
		if a.File == "" {
			continue
		}
		if !filepath.IsLocal(a.File) {
			return man, errs.Invalidf("dir", "backup", "the manifest names %q, outside the backup", a.File)
		}
		f, err := os.Open(filepath.Join(dir, a.File))
		if err != nil {
			return man, errs.Invalidf("dir", "backup", "the backup lacks %s: %v", a.File, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		_ = f.Close()
		if err != nil {
			return man, err
		}
		if sum := hex.EncodeToString(h.Sum(nil)); n != a.Bytes || sum != a.SHA256 {
			return man, errs.Invalidf("dir", "backup", "%s in the backup is %d bytes with sha256 %s, but the manifest says %d bytes with sha256 %s: the backup was changed or damaged", a.File, n, sum, a.Bytes, a.SHA256)
		}
	}
	return man, nil
}

func newRestore() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "restore DIR",
		Short: "Put a backup back into the data dir, after checking it; only while no daemon serves the data dir",
		Long: `Puts the backup in DIR (written by ` + "`cairn backup`" + `) back into the data dir.
First the backup is checked: every file's sha256 against the manifest, then
every store as ` + "`cairn store check`" + ` would. Then each area puts its file in place
atomically (written beside, renamed over); the file it replaces is kept
beside it as <file>.pre-restore-<time>.

It refuses while a daemon serves the data dir, rather than stopping it: a
running session's relay would start a fresh daemon on the old stores at its
next message. End the sessions, run ` + "`cairn stop`" + `, then restore; the restore
holds the daemon's lock meanwhile, so no daemon starts halfway. A server
running without the daemon holds core.db, and is refused the same way.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return errs.Invalidf("dir", "path", "%q: %v", args[0], err)
			}
			man, err := readManifest(dir)
			if err != nil {
				return err
			}
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			if s.Store != "" {
				return errs.Invalidf("CAIRN_STORE", "bbolt", "the stores are in PostgreSQL: restore them with pg_restore (docs/deploy.md), not `cairn restore`")
			}
			p := daemon.PathsFor(s.DataDir)
			lock, err := daemon.Lock(p)
			if errors.Is(err, daemon.ErrAlreadyRunning) {
				return errs.Newf(409, errs.Conflict, "a cairn daemon serves %s: end its sessions and run `cairn stop`, then `cairn restore` again (a restore never replaces the stores under a running server)", s.DataDir)
			}
			if err != nil {
				return errs.Newf(500, errs.InitFailed, "daemon lock %s: %v", p.Lock, err)
			}
			defer lock.Close()
			c, err := storeClient(cmd.Context(), configFile, true)
			if err != nil {
				return err
			}
			defer c.close()
			rep, err := checkStores(cmd.Context(), c, dir)
			if err != nil {
				return err
			}
			if !rep.OK {
				return errs.Newf(500, errs.Internal, "the backup in %s does not check, nothing was restored: %s", dir, strings.Join(rep.Problems, "; "))
			}
			out := struct {
				From     string               `json:"from"`
				To       string               `json:"to"`
				Manifest Manifest             `json:"manifest"`
				Restored []boltcheck.Restored `json:"restored"`
			}{From: dir, To: s.DataDir, Manifest: man}
			for _, a := range storeAreas {
				var r boltcheck.Restored
				if _, err := c.call(cmd.Context(), a+"_store_restore", boltcheck.RestoreInput{From: dir, To: s.DataDir}, &r); err != nil {
					e := errs.From(err)
					done := make([]string, 0, len(out.Restored))
					for _, r := range out.Restored {
						done = append(done, r.Area)
					}
					return errs.New(e.Status, e.Code, fmt.Sprintf("the %s area did not restore its store (%s); areas restored before it: %v", a, e.Message, done))
				}
				out.Restored = append(out.Restored, r)
			}
			return writeJSON(cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	return cmd
}
