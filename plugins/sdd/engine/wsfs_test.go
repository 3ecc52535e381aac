//go:build unix

package engine

import (
	"github.com/cairn-mcp/cairn/sdk/plainfile"

	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// wantRule checks a 400 naming field and the file rule.
func wantRule(t *testing.T, err error, field, rule string) {
	t.Helper()
	wantErr(t, err, 400, errs.InvalidInput, field)
	if e, _ := errs.As(err); e.Details["constraint"] != rule {
		t.Fatalf("constraint = %v, want %s (%s)", e.Details["constraint"], rule, e.Message)
	}
}

// within runs f and fails the test instead of hanging when f blocks (a
// FIFO opened for reading blocks until a writer comes).
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkspaceFileRules: every way a workspace command or agent file could
// lead a read outside the root, or block it, is refused with a 400 naming
// the field and the rule, through both the resource and the vitals path.
func TestWorkspaceFileRules(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	writeFile(t, secret, "## Objective\nthe secret")
	cmds := filepath.Join(fx.root, ".agents", "commands")
	writeFile(t, filepath.Join(cmds, "fine.md"), "## Objective\nfine")
	// A hard link: same inode as a file outside the root.
	if err := os.Link(secret, filepath.Join(cmds, "linked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(cmds, "sym.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../"+filepath.Base(outside)+"/secret.md", filepath.Join(cmds, "rel.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cmds, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(cmds, "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the root is followed.
	if err := os.Symlink("fine.md", filepath.Join(cmds, "alias.md")); err != nil {
		t.Fatal(err)
	}
	// A directory symlink leading outside, used as a path component.
	if err := os.Symlink(outside, filepath.Join(fx.root, ".agents", "agents")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(outside, "sdd-planner.md")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		uri, rule string
	}{
		{"sdd://commands/linked", "singleLink"},
		{"sdd://commands/sym", "path"},
		{"sdd://commands/rel", "path"},
		{"sdd://commands/fifo", "regularFile"},
		{"sdd://commands/dir", "regularFile"},
		{"sdd://agents/sdd-planner", "path"},
	}
	for _, c := range cases {
		t.Run(c.uri, func(t *testing.T) {
			var rc *ResourceContent
			err := within(t, c.uri, func() error {
				var err error
				rc, err = fx.e.ReadResource(c.uri)
				return err
			})
			if rc != nil && strings.Contains(rc.Content, "secret") {
				t.Fatal("served a file from outside the root")
			}
			wantRule(t, err, "uri", c.rule)
		})
	}
	for _, id := range []string{"linked", "sym", "fifo"} {
		err := within(t, id, func() error { _, err := fx.e.GetCommandVitals(id); return err })
		wantErr(t, err, 400, errs.InvalidInput, "command")
	}
	for _, uri := range []string{"sdd://commands/fine", "sdd://commands/alias"} {
		rc, err := fx.e.ReadResource(uri)
		if err != nil || !strings.Contains(rc.Content, "fine") {
			t.Fatalf("%s: %v %v", uri, rc, err)
		}
	}
	// Listing does not open anything: the FIFO and the directory are not
	// listed, and listing returns.
	var res []ResourceEntry
	if err := within(t, "list", func() error { var err error; res, err = fx.e.ListResources(); return err }); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.URI == "sdd://commands/fifo" || r.URI == "sdd://commands/dir" || strings.Contains(r.Description, "secret") {
			t.Errorf("listed %s (%s)", r.URI, r.Description)
		}
	}
}

// TestReadRefusesBeforeOpening: a FIFO is refused by the check made before
// opening, so no open (blocking or not) happens; a file swapped for a FIFO
// after the check would still be opened without blocking and refused.
func TestReadRefusesBeforeOpening(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = within(t, "read of a FIFO", func() error { _, err := readRegular(r, "p", 10); return err })
	if !isRefusal(err) {
		t.Fatalf("want a refusal, got %v", err)
	}
	// The non-blocking open itself returns at once on a FIFO.
	err = within(t, "non-blocking open", func() error {
		f, err := r.OpenFile("p", os.O_RDONLY|plainfile.OpenNonblock, 0)
		if err == nil {
			f.Close()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "big"), strings.Repeat("x", 11))
	if _, err := readRegular(r, "big", 10); !isRefusal(err) {
		t.Fatalf("over the limit: %v", err)
	}
}

// TestRollbackThroughPlanningSymlink is the audit's finding: rollback
// removed a file outside the root through a .planning symlink. Now the
// removal goes through os.Root: refused, the outside file survives.
func TestRollbackThroughPlanningSymlink(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if _, err := fx.e.SetStateValue("currentPhase", 9); err != nil {
		t.Fatal(err)
	}
	ap, err := fx.e.ApplyEvolution("missing-plan-9", true)
	if err != nil || !ap.Success {
		t.Fatal(ap, err)
	}
	// Swap .planning for a symlink to a directory outside holding a file
	// of the same name.
	outside := t.TempDir()
	victim := filepath.Join(outside, "PLAN-phase-9.md")
	writeFile(t, victim, "not yours")
	if err := os.RemoveAll(filepath.Join(fx.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(fx.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	_, err = fx.e.RollbackEvolution("missing-plan-9")
	wantRule(t, err, "candidateId", "path")
	if b, err := os.ReadFile(victim); err != nil || string(b) != "not yours" {
		t.Fatalf("the file outside the root was touched: %q %v", b, err)
	}
	// The action stays applied, so a rollback can be retried once the
	// link is gone.
	if err := os.Remove(filepath.Join(fx.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.e.RollbackEvolution("missing-plan-9"); err != nil {
		t.Fatal(err)
	}
}

// TestAtomicWriteThroughSymlinkRefused: restoring a file (rollback of an
// overwritten plan) through a symlinked directory is refused as well.
func TestAtomicWriteThroughSymlinkRefused(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "PLAN-phase-1.md")
	writeFile(t, victim, "not yours")
	if err := os.Symlink(outside, filepath.Join(root, ".planning")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = classify(writeAtomic(r, ".planning/PLAN-phase-1.md", []byte("mine")))
	if !isRefusal(err) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not yours" {
		t.Fatal("wrote outside the root")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("outside holds %d entries", len(ents))
	}
}

// TestPlanFileRules: an existing plan that is a FIFO or a hard link is
// refused before it is read for the rollback copy.
func TestPlanFileRules(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	plan := filepath.Join(fx.root, ".planning", "PLAN-phase-1.md")
	if err := os.MkdirAll(filepath.Dir(plan), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(plan, 0o644); err != nil {
		t.Fatal(err)
	}
	err := within(t, "plan over a FIFO", func() error { _, err := fx.e.GeneratePlan("1", ""); return err })
	wantRule(t, err, "phase", "regularFile")
	secret := filepath.Join(t.TempDir(), "s")
	writeFile(t, secret, "secret")
	if err := os.Link(secret, filepath.Join(fx.root, ".planning", "PLAN-phase-2.md")); err != nil {
		t.Fatal(err)
	}
	_, err = fx.e.GeneratePlan("2", "")
	wantRule(t, err, "phase", "singleLink")
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Fatal("the linked file changed")
	}
}

// TestStateFileRules: a state file that is a FIFO or hard-linked is set
// aside at start like a corrupt one (reported, never read, never blocking).
func TestStateFileRules(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "hardlink"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, ".cairn", "data", "state", stateFileName)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if kind == "fifo" {
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				other := filepath.Join(t.TempDir(), "other.json")
				writeFile(t, other, `{"version":1}`)
				if err := os.Link(other, path); err != nil {
					t.Fatal(err)
				}
			}
			e, err := New(Config{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if err := within(t, "initialize", func() error { _, err := e.Initialize(); return err }); err != nil {
				t.Fatal(err)
			}
			if h := e.Health(); h.Status != "degraded" || h.Recovery == nil {
				t.Fatalf("health = %+v", h)
			}
			if _, err := e.SetStateValue("a", 1); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(path); err != nil || plainfile.Check(fi) != nil {
				t.Fatalf("new state file: %v %v", fi, err)
			}
		})
	}
}
