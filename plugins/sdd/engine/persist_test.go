package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

type timeT = time.Time

func stateDirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestAtomicWriteFailureKeepsOldFile(t *testing.T) {
	fx := newFixture(t)
	if _, err := fx.e.SetStateValue("keep", "old"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(fx.e.StatePath())
	testHookBeforeSync = func(*os.File) error { return errors.New("injected disk failure") }
	defer func() { testHookBeforeSync = nil }()
	_, err := fx.e.SetStateValue("keep", "new")
	wantErr(t, err, 500, errs.Internal, "")
	if !strings.Contains(err.Error(), "injected disk failure") {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(fx.e.StatePath())
	if string(before) != string(after) {
		t.Fatal("state file changed by a failed write")
	}
	if names := stateDirEntries(t, filepath.Dir(fx.e.StatePath())); len(names) != 1 || names[0] != stateFileName {
		t.Fatalf("temp file left behind: %v", names)
	}
	// The cache was not changed either: no acknowledged-but-lost write.
	if v, _, _ := fx.e.GetStateValue("keep"); v != "old" {
		t.Fatalf("cache changed by a failed write: %v", v)
	}
	testHookBeforeSync = nil
	if _, err := fx.e.SetStateValue("keep", "new"); err != nil {
		t.Fatal(err)
	}
}

func TestAtomicWriteReadOnlyDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; TestAtomicWriteFailureKeepsOldFile covers the failure path")
	}
	fx := newFixture(t)
	if _, err := fx.e.SetStateValue("keep", "old"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(fx.e.StatePath())
	before, _ := os.ReadFile(fx.e.StatePath())
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	_, err := fx.e.SetStateValue("keep", "new")
	wantErr(t, err, 500, errs.Internal, "")
	after, _ := os.ReadFile(fx.e.StatePath())
	if string(before) != string(after) {
		t.Fatal("state changed")
	}
	if names := stateDirEntries(t, dir); len(names) != 1 {
		t.Fatalf("temp file left: %v", names)
	}
}

// crashChildEnv makes the test binary act as a writer child.
const crashChildEnv = "SDD_ENGINE_CRASH_CHILD"

// TestCrashChild is the child half of TestKillDuringWrites: it writes state
// in a tight loop until killed.
func TestCrashChild(t *testing.T) {
	t.Parallel()
	root := os.Getenv(crashChildEnv)
	if root == "" {
		t.Skip("only runs as the child of TestKillDuringWrites")
	}
	e, err := New(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Initialize(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 4096) // a larger document widens the torn-write window
	for i := 0; ; i++ {
		if _, err := e.SetStateValue(fmt.Sprintf("k%d", i%50), map[string]any{"i": i, "pad": big}); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if _, err := e.CreateLease(fmt.Sprintf("T-%d", i), []string{"a"}); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

// TestKillDuringWrites SIGKILLs a writer at random moments many times and
// checks the state file always parses and only grows in content.
func TestKillDuringWrites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	root := t.TempDir()
	statePath := filepath.Join(root, ".cairn", "data", "state", stateFileName)
	rounds := 50
	lastLease := int64(0)
	for r := 0; r < rounds; r++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+root)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		if _, err := out.Read(buf); err != nil {
			t.Fatalf("round %d: child did not start: %v", r, err)
		}
		// Kill the child at a random point of its writes.
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()

		data, err := os.ReadFile(statePath)
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		st, err := decodeState(data)
		if err != nil {
			t.Fatalf("round %d: state file does not parse after SIGKILL: %v", r, err)
		}
		n := st.Counters["lease"]
		if n < lastLease {
			t.Fatalf("round %d: lease counter went back from %d to %d", r, lastLease, n)
		}
		lastLease = n
		// An engine opens it cleanly, without recovery.
		e, _ := New(Config{Root: root})
		if _, err := e.Initialize(); err != nil || e.Health().Recovery != nil {
			t.Fatalf("round %d: reopen: %v %+v", r, err, e.Health())
		}
	}
	if lastLease == 0 {
		t.Fatal("children never wrote")
	}
}

func TestEvolutionRoundTrip(t *testing.T) { pgtest.EachStore(t, testEvolutionRoundTrip) }

func testEvolutionRoundTrip(t *testing.T) {
	fx := newFixture(t)
	// A phase recorded in state without a plan file.
	if _, err := fx.e.SetStateValue("currentPhase", "7"); err != nil {
		t.Fatal(err)
	}
	// A lease that will expire unreturned.
	l, _ := fx.e.CreateLease("T-9", nil)
	fx.clock.Advance(2 * time.Hour)

	cands, err := fx.e.DetectEvolution("all")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]EvolutionCandidate{}
	for _, c := range cands {
		ids[c.ID] = c
	}
	if _, ok := ids["missing-plan-7"]; !ok {
		t.Fatalf("%+v", cands)
	}
	if _, ok := ids["stale-lease-"+l.LeaseID]; !ok {
		t.Fatalf("%+v", cands)
	}
	if c, _ := fx.e.DetectEvolution("doctrine"); len(c) != 1 {
		t.Fatalf("doctrine: %+v", c)
	}
	if c, _ := fx.e.DetectEvolution("workflow"); len(c) != 1 {
		t.Fatalf("workflow: %+v", c)
	}

	// Missing plan: apply writes the plan (and .planning), rollback removes both.
	planPath := filepath.Join(fx.root, ".planning", "PLAN-phase-7.md")
	r, err := fx.e.ApplyEvolution("missing-plan-7", false)
	if err != nil || !r.Success || r.ActionID == "" {
		t.Fatal(r, err)
	}
	if b, err := os.ReadFile(planPath); err != nil || !strings.Contains(string(b), "<success_criteria>") {
		t.Fatal(err)
	}
	if c, _ := fx.e.DetectEvolution("doctrine"); len(c) != 0 {
		t.Fatalf("candidate not resolved: %+v", c)
	}
	rb, err := fx.e.RollbackEvolution("missing-plan-7")
	if err != nil || !rb.Success || rb.ActionID != r.ActionID {
		t.Fatal(rb, err)
	}
	if _, err := os.Stat(planPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("plan not removed by rollback")
	}
	if _, err := os.Stat(filepath.Join(fx.root, ".planning")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("created .planning not removed by rollback")
	}
	_, err = fx.e.RollbackEvolution("missing-plan-7")
	wantErr(t, err, 404, errs.NotFound, "candidateId")

	// Stale lease: apply returns it, rollback reopens it.
	id := "stale-lease-" + l.LeaseID
	if r, err := fx.e.ApplyEvolution(id, false); err != nil || !r.Success {
		t.Fatal(r, err)
	}
	if c, _ := fx.e.DetectEvolution("workflow"); len(c) != 0 {
		t.Fatalf("%+v", c)
	}
	if _, err := fx.e.RollbackEvolution(id); err != nil {
		t.Fatal(err)
	}
	if c, _ := fx.e.DetectEvolution("workflow"); len(c) != 1 {
		t.Fatalf("lease not reopened: %+v", c)
	}

	// Stale project: low confidence needs force.
	fx.clock.Advance(StaleProjectAfter)
	r, err = fx.e.ApplyEvolution("stale-project", false)
	if err != nil || r.Success || r.Recommendation == "" {
		t.Fatal(r, err)
	}
	r, err = fx.e.ApplyEvolution("stale-project", true)
	if err != nil || !r.Success {
		t.Fatal(r, err)
	}
	if st, _ := fx.e.GetStats(); st.Status != "ok" {
		t.Fatal(st.Status)
	}
	if _, err := os.Stat(filepath.Join(fx.root, ".planning")); err != nil {
		t.Fatal(".planning not created")
	}
	if _, err := fx.e.RollbackEvolution("stale-project"); err != nil {
		t.Fatal(err)
	}
	report, err := fx.e.EvolveTool(EvolveInput{Action: "report"})
	if err != nil || !strings.Contains(report.Text, "Actions rolled back: 3") {
		t.Fatal(report, err)
	}
}

func TestPlanSymlinkEscapeRefused(t *testing.T) { pgtest.EachStore(t, testPlanSymlinkEscapeRefused) }

func testPlanSymlinkEscapeRefused(t *testing.T) {
	fx := newFixture(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(fx.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	_, err := fx.e.GeneratePlan("1", "")
	wantErr(t, err, 400, errs.InvalidInput, "phase")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatal("wrote outside the root")
	}
}

func TestPhaseNames(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"1", "12", "2.1", "phase-a", "A_b"} {
		if CheckPhase(ok) != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "../x", "/abs", "a/b", "a\\b", "..", ".x", "-x", "a..b", "x\x00", strings.Repeat("a", 65), "ä"} {
		if CheckPhase(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseKeyPath(f *testing.F) {
	for _, s := range []string{"a.b", "__proto__", "a..b", "", "x.constructor", "a-b_c.9", "é.ü", "a.b.c.d.e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		segs, err := ParseKeyPath(key)
		if err != nil {
			e, ok := errs.As(err)
			if !ok || e.Status != 400 || e.Details["field"] != "keyPath" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if strings.Join(segs, ".") != key {
			t.Fatal("segments do not rebuild the key")
		}
		for _, s := range segs {
			if !keySegment().MatchString(s) || reservedSegments[s] {
				t.Fatalf("bad segment accepted %q", s)
			}
		}
	})
}

func FuzzValidateContent(f *testing.F) {
	f.Add("<objective>x</objective>", "plan")
	f.Add("## What This Is\n## Core Value\n## Requirements", "project")
	f.Add("```\n## Out of Scope\n```", "requirements")
	f.Add("<İ<objective></objective>", "")
	f.Fuzz(func(t *testing.T, content, typ string) {
		res, err := ValidateContent(content, typ)
		if err != nil {
			if _, ok := errs.As(err); !ok {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if res.Valid != (len(res.Missing) == 0) {
			t.Fatal("valid disagrees with missing")
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	})
}
