package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TestIdempotentReplays: for every writing action that honours the key,
// the same key twice writes once (the state file keeps every byte, no
// second event), and the replay returns the first outcome, even where
// running the call again would now answer differently.
func TestIdempotentReplays(t *testing.T) { pgtest.EachStore(t, testIdempotentReplays) }

func testIdempotentReplays(t *testing.T) {
	fx := newFixture(t)
	q, err := fx.e.QueueAgentSpawnPlan(IntentDebugIssue, SpawnOptions{}, SpawnSource{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.e.SetStateValue("gone", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.e.RegisterSkill("go", SkillPayload{}); err != nil {
		t.Fatal(err)
	}
	lease, err := fx.e.CreateLease("T-0", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func(c Call) (any, error)
	}{
		{"plan", func(c Call) (any, error) { return fx.e.PlanTool(c, PlanInput{Phase: "4", Context: "x"}) }},
		{"plan auto_spawn", func(c Call) (any, error) {
			return fx.e.PlanTool(c, PlanInput{Phase: "5", AutoSpawn: true, SkipResearch: true})
		}},
		{"state set", func(c Call) (any, error) {
			return fx.e.StateTool(c, StateInput{Action: "set", KeyPath: "a.b", Value: []byte(`{"n":1}`)})
		}},
		{"state delete", func(c Call) (any, error) { return fx.e.StateTool(c, StateInput{Action: "delete", KeyPath: "gone"}) }},
		{"lease issue", func(c Call) (any, error) { return fx.e.LeaseTool(c, LeaseInput{Action: "issue", TaskID: "T-1"}) }},
		{"lease return", func(c Call) (any, error) {
			return fx.e.LeaseTool(c, LeaseInput{Action: "return", LeaseID: lease.LeaseID})
		}},
		{"agent set_rule", func(c Call) (any, error) {
			return fx.e.AgentTool(c, AgentInput{Action: "set_rule", Intent: "review", Rule: &SpawnRuleInput{Main: []string{"sdd-verifier"}}})
		}},
		{"agent enqueue", func(c Call) (any, error) {
			return fx.e.AgentTool(c, AgentInput{Action: "enqueue", Intent: IntentPlanPhase})
		}},
		{"agent complete", func(c Call) (any, error) {
			return fx.e.AgentTool(c, AgentInput{Action: "complete", SpawnID: q.QueueItems[0].SpawnID, CompletionStatus: "completed"})
		}},
		{"skill register", func(c Call) (any, error) { return fx.e.SkillTool(c, SkillInput{Action: "register", SkillID: "rust"}) }},
		{"skill bind", func(c Call) (any, error) {
			return fx.e.SkillTool(c, SkillInput{Action: "bind", AgentID: "sdd-planner", SkillID: "go"})
		}},
		{"skill unbind", func(c Call) (any, error) {
			return fx.e.SkillTool(c, SkillInput{Action: "unbind", AgentID: "sdd-planner", SkillID: "go"})
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Call{Idem: idempotency.Key{Key: fmt.Sprintf("session-1:%d", i)}, Tool: "t"}
			first, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			file := stateFile(t, fx)
			plans, _ := os.ReadDir(filepath.Join(fx.root, ".planning"))
			var planBytes [][]byte
			for _, p := range plans {
				b, _ := os.ReadFile(filepath.Join(fx.root, ".planning", p.Name()))
				planBytes = append(planBytes, b)
			}
			events := len(fx.evs.types())
			fx.clock.Advance(time.Second)
			again, err := tc.call(c)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			a, _ := json.Marshal(first)
			b, _ := json.Marshal(again)
			if !bytes.Equal(a, b) {
				t.Fatalf("replay answered differently:\nfirst  %s\nreplay %s", a, b)
			}
			if !bytes.Equal(file, stateFile(t, fx)) {
				t.Fatal("the replay wrote the state file")
			}
			for i, p := range plans {
				if b, _ := os.ReadFile(filepath.Join(fx.root, ".planning", p.Name())); !bytes.Equal(b, planBytes[i]) {
					t.Fatalf("the replay rewrote %s", p.Name())
				}
			}
			if n := len(fx.evs.types()); n != events {
				t.Fatalf("the replay published %d more events", n-events)
			}
		})
	}
	// Without a key every call is its own write.
	a, _ := fx.e.LeaseTool(Call{}, LeaseInput{Action: "issue", TaskID: "T-9"})
	b, _ := fx.e.LeaseTool(Call{}, LeaseInput{Action: "issue", TaskID: "T-9"})
	if a.Lease.LeaseID == b.Lease.LeaseID {
		t.Fatal("two unkeyed issues gave one lease")
	}
}

// TestIdempotencyKeyReusedForAnotherCall: a key is bound to its call; the
// same key with other arguments is a 409, and nothing is written.
func TestIdempotencyKeyReusedForAnotherCall(t *testing.T) {
	pgtest.EachStore(t, testIdempotencyKeyReusedForAnotherCall)
}

func testIdempotencyKeyReusedForAnotherCall(t *testing.T) {
	fx := newFixture(t)
	c := Call{Idem: idempotency.Key{Key: "k"}}
	if _, err := fx.e.StateTool(c, StateInput{Action: "set", KeyPath: "a", Value: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	before := stateFile(t, fx)
	_, err := fx.e.StateTool(c, StateInput{Action: "set", KeyPath: "a", Value: []byte(`2`)})
	wantErr(t, err, 409, errs.Conflict, "idempotencyKey")
	_, err = fx.e.LeaseTool(c, LeaseInput{Action: "issue", TaskID: "T"})
	wantErr(t, err, 409, errs.Conflict, "idempotencyKey")
	if !bytes.Equal(before, stateFile(t, fx)) {
		t.Fatal("a refused call wrote")
	}
}

// TestIdempotencyFailedCallNotRecorded: a call that failed wrote nothing
// and recorded nothing, so its replay runs again.
func TestIdempotencyFailedCallNotRecorded(t *testing.T) {
	pgtest.EachStore(t, testIdempotencyFailedCallNotRecorded)
}

func testIdempotencyFailedCallNotRecorded(t *testing.T) {
	fx := newFixture(t)
	if _, err := fx.e.SetStateValue("s", "str"); err != nil {
		t.Fatal(err)
	}
	c := Call{Idem: idempotency.Key{Key: "k"}}
	_, err := fx.e.StateTool(c, StateInput{Action: "set", KeyPath: "s.x", Value: []byte(`1`)})
	wantErr(t, err, 409, errs.Conflict, "keyPath")
	if _, err := fx.e.DeleteStateValue("s"); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.e.StateTool(c, StateInput{Action: "set", KeyPath: "s.x", Value: []byte(`1`)}); err != nil {
		t.Fatalf("the replay of a failed call must run: %v", err)
	}
}

// TestIdempotencyRecordsKeptByTime: however many keyed writes follow, a
// client's key is honoured for its 24-hour hold and a derived one for ten
// minutes (the records used to keep only the newest 1,000 keys); past its
// hold a record goes; past the byte bound a keyed write is refused with a
// retryable 503, never by forgetting a held key.
func TestIdempotencyRecordsKeptByTime(t *testing.T) {
	t.Parallel()
	now := newFixture(t).clock.Now()
	s := newState(now)
	client := keyFor(Call{Idem: idempotency.Key{Key: "client-0", Client: true}}, "op", 0)
	if err := recordCall(s, client, "first", now); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := recordCall(s, keyFor(Call{Idem: idempotency.Key{Key: fmt.Sprint(i)}}, "op", i), i, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if r, ok, err := lookupCall(s, client, now.Add(idempotency.ClientHold-time.Minute)); err != nil || !ok || string(r) != `"first"` {
		t.Fatalf("a client's key after 3,000 later keyed writes: %s %v %v", r, ok, err)
	}
	derived := keyFor(Call{Idem: idempotency.Key{Key: "0"}}, "op", 0)
	if _, ok, _ := lookupCall(s, derived, now.Add(idempotency.DerivedHold-time.Second)); !ok {
		t.Fatal("a derived key was forgotten within its hold")
	}
	if _, ok, _ := lookupCall(s, derived, now.Add(idempotency.DerivedHold+time.Second)); ok {
		t.Fatal("a derived key outlived its hold")
	}
	// A write after the derived holds drops them, and keeps the client's.
	if err := recordCall(s, keyFor(Call{Idem: idempotency.Key{Key: "late"}}, "op", 1), 1, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(s.Calls) != 2 {
		t.Fatalf("%d records an hour on, want the client's and the new one", len(s.Calls))
	}
	big := strings.Repeat("x", maxIdempotencyBytes/3)
	var refused error
	for i := range 5 {
		if refused = recordCall(s, keyFor(Call{Idem: idempotency.Key{Key: fmt.Sprint("big", i)}}, "op", i), big, now.Add(time.Hour)); refused != nil {
			break
		}
	}
	if e, ok := errs.As(refused); !ok || e.Status != 503 || e.Details["retryable"] != true {
		t.Fatalf("past the byte bound: %v; want a retryable 503", refused)
	}
	if _, ok, _ := lookupCall(s, client, now.Add(time.Hour)); !ok {
		t.Fatal("the byte bound forgot a held key")
	}
}

// TestIdempotencySurvivesRestart: the record is in the state file, so a
// replay after the plugin restarts still returns the first outcome.
func TestIdempotencySurvivesRestart(t *testing.T) {
	pgtest.EachStore(t, testIdempotencySurvivesRestart)
}

func testIdempotencySurvivesRestart(t *testing.T) {
	fx := newFixture(t)
	c := Call{Idem: idempotency.Key{Key: "relay-7:42"}}
	first, err := fx.e.LeaseTool(c, LeaseInput{Action: "issue", TaskID: "T-1"})
	if err != nil {
		t.Fatal(err)
	}
	fx2 := openFixture(t, fx.root, fx.clock)
	again, err := fx2.e.LeaseTool(c, LeaseInput{Action: "issue", TaskID: "T-1"})
	if err != nil || again.Lease.LeaseID != first.Lease.LeaseID || again.Text != first.Text {
		t.Fatalf("%+v %v", again, err)
	}
	if ls, _ := fx2.e.ListActiveLeases(); len(ls) != 1 {
		t.Fatalf("%d leases", len(ls))
	}
}

// TestReturnedLeasesAreNotKeptPastTheirBounds: after 300 keyed leases are
// issued and returned, the state keeps the last MaxRetainedLeases closed
// leases (D17), and the outcomes recorded for replays of those calls go
// once their hold (ten minutes for the keys the host derives) has passed, so the state file stops
// growing with returned leases.
func TestReturnedLeasesAreNotKeptPastTheirBounds(t *testing.T) {
	pgtest.EachStore(t, testReturnedLeaseBounds)
}

func testReturnedLeaseBounds(t *testing.T) {
	fx := newFixture(t)
	cycle := func(i int) {
		l, err := fx.e.LeaseTool(Call{Idem: idempotency.Key{Key: fmt.Sprintf("issue-%d", i)}}, LeaseInput{Action: "issue", TaskID: fmt.Sprintf("plan-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.e.LeaseTool(Call{Idem: idempotency.Key{Key: fmt.Sprintf("return-%d", i)}}, LeaseInput{Action: "return", LeaseID: l.Lease.LeaseID, Result: strings.Repeat("done ", 20)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i++ {
		cycle(i)
	}
	var st struct {
		Leases []json.RawMessage `json:"leases"`
		Calls  []json.RawMessage `json:"idempotency"`
	}
	if err := json.Unmarshal(stateFile(t, fx), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Leases) != MaxRetainedLeases {
		t.Errorf("%d leases kept, want the last %d closed ones", len(st.Leases), MaxRetainedLeases)
	}
	if len(st.Calls) != 600 {
		t.Errorf("%d keyed outcomes within the window, want all 600", len(st.Calls))
	}
	// Past the hold one more keyed write drops every outcome older than
	// it: the file no longer mentions the returned leases.
	fx.clock.Advance(idempotency.DerivedHold + time.Minute)
	cycle(300)
	file := stateFile(t, fx)
	if err := json.Unmarshal(file, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Calls) != 2 {
		t.Errorf("%d keyed outcomes after the window, want the 2 new ones", len(st.Calls))
	}
	// The closed leases kept, the one closed by this write (pruning runs
	// before each write), and the two recorded outcomes.
	if n := bytes.Count(file, []byte(`"leaseId"`)); n > MaxRetainedLeases+3 {
		t.Errorf("the state file mentions %d leases, want at most %d", n, MaxRetainedLeases+3)
	}
}
