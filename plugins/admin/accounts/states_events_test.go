package accounts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// drain returns the events queued for the bus since the last drain.
func drain(t *testing.T, a *Admin) []store.Event {
	t.Helper()
	var out []store.Event
	for {
		n, err := a.Store().DrainOutbox(func(ev store.Event) error { out = append(out, ev); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return out
		}
	}
}

func eventData(t *testing.T, ev store.Event) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRotationGraceIsItsOwnState(t *testing.T) {
	pgtest.EachStore(t, testRotationGraceIsItsOwnState)
}

func testRotationGraceIsItsOwnState(t *testing.T) {
	a, c, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "svc", UserID: "u"})
	r, err := a.RotateAPIKey(k.ID, RotateOptions{RotatedBy: "ops", GracePeriodMs: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	wantEnd := FormatTime(c.now().Add(time.Minute))
	if r.OldKey.Status != KeyRotating || r.OldKey.GraceEndsAt == nil || *r.OldKey.GraceEndsAt != wantEnd || r.OldKey.RevokedAt != nil {
		t.Fatalf("old key right after rotation: %+v", r.OldKey)
	}
	for _, check := range []func() (*APIKey, error){
		func() (*APIKey, error) { return a.GetAPIKeyByID(k.ID) },
		func() (*APIKey, error) { return a.GetAPIKeyByHash(HashKey(k.PlaintextKey)) },
	} {
		if got, err := check(); err != nil || got == nil || got.Status != KeyRotating {
			t.Fatalf("during grace: %+v %v", got, err)
		}
	}
	if l, _ := a.ListAPIKeys(ListAPIKeysOptions{Status: KeyRotating}); len(l) != 1 || l[0].ID != k.ID {
		t.Fatalf("list rotating: %+v", l)
	}
	if l, _ := a.ListAPIKeys(ListAPIKeysOptions{Status: KeyRevoked}); len(l) != 0 {
		t.Fatalf("a rotating key listed as revoked: %+v", l)
	}
	if v, _ := a.ValidateAPIKey(k.PlaintextKey); !v.Valid || !v.InGracePeriod || v.APIKey.Status != KeyRotating {
		t.Fatalf("validate during grace: %+v", v)
	}
	// Grace over: revoked, from the grace end.
	c.add(time.Minute)
	got, _ := a.GetAPIKeyByID(k.ID)
	if got.Status != KeyRevoked || got.RevokedAt == nil || *got.RevokedAt != wantEnd {
		t.Fatalf("after grace: %+v", got)
	}
	if v, _ := a.ValidateAPIKey(k.PlaintextKey); v.Valid || v.Reason != ReasonRevoked {
		t.Fatalf("validate after grace: %+v", v)
	}
	if g, _ := a.GetAPIKeyByHash(HashKey(k.PlaintextKey)); g != nil {
		t.Fatal("auth lookup accepts a key past its grace")
	}
	// Revoking a rotating key ends its grace at once.
	k2, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "svc2", UserID: "u"})
	if _, err := a.RotateAPIKey(k2.ID, RotateOptions{GracePeriodMs: 60_000}); err != nil {
		t.Fatal(err)
	}
	if rv, _ := a.RevokeAPIKey(k2.ID, "ops"); rv.Status != KeyRevoked || rv.GraceEndsAt != nil {
		t.Fatalf("revoke during grace: %+v", rv)
	}
	if v, _ := a.ValidateAPIKey(k2.PlaintextKey); v.Valid {
		t.Fatal("revoked rotating key still valid")
	}
}

func TestLegacyGraceRecordsReadAsRotating(t *testing.T) {
	pgtest.EachStore(t, testLegacyGraceRecordsReadAsRotating)
}

func testLegacyGraceRecordsReadAsRotating(t *testing.T) {
	a, c, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "old", UserID: "u"})
	end := FormatTime(c.now().Add(time.Hour))
	// A record as the previous build wrote it: revoked plus grace_until.
	if err := a.Store().Update(func(tx store.Tx) error {
		var m map[string]any
		if _, err := store.Get(tx, store.BucketKeys, []byte(k.ID), &m); err != nil {
			return err
		}
		m["status"], m["grace_until"], m["revoked_at"] = "revoked", end, FormatTime(c.now())
		delete(m, "grace_ends_at")
		return store.Put(tx, store.BucketKeys, []byte(k.ID), m)
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := a.GetAPIKeyByID(k.ID)
	if got.Status != KeyRotating || got.GraceEndsAt == nil || *got.GraceEndsAt != end {
		t.Fatalf("legacy record: %+v", got)
	}
}

func TestNullFieldsArePresentAndAuditNamesTheActor(t *testing.T) {
	pgtest.EachStore(t, testNullFieldsArePresentAndAuditNamesTheActor)
}

func testNullFieldsArePresentAndAuditNamesTheActor(t *testing.T) {
	a, _, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "n", UserID: "u"})
	raw, _ := json.Marshal(k)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, f := range []string{"workspace_id", "expires_at", "last_used_at", "rotated_from", "revoked_at", "revoked_by", "grace_ends_at"} {
		v, ok := m[f]
		if !ok || v != nil {
			t.Errorf("api key %s = %v (present %v), want null", f, v, ok)
		}
	}
	if u := m["usage"].(map[string]any); u["last_used_at"] != nil {
		t.Errorf("usage.last_used_at = %v", u["last_used_at"])
	} else if _, ok := u["last_used_at"]; !ok {
		t.Error("usage.last_used_at omitted")
	}
	ws, _ := a.CreateWorkspace(CreateWorkspaceOptions{Name: "W", OwnerID: "o"})
	raw, _ = json.Marshal(ws)
	m = map[string]any{}
	_ = json.Unmarshal(raw, &m)
	if v, ok := m["org_id"]; !ok || v != nil {
		t.Errorf("workspace org_id = %v (present %v)", v, ok)
	}
	inv, _ := a.InviteMember(ws.ID, InviteMemberOptions{Email: "a@example.com", Role: RoleViewer, InvitedBy: "o"})
	raw, _ = json.Marshal(inv)
	m = map[string]any{}
	_ = json.Unmarshal(raw, &m)
	for _, f := range []string{"accepted_at", "accepted_by"} {
		if v, ok := m[f]; !ok || v != nil {
			t.Errorf("invitation %s = %v (present %v)", f, v, ok)
		}
	}

	name := "renamed"
	if _, err := a.UpdateAPIKey(k.ID, APIKeyUpdates{Name: &name, UpdatedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateAPIKey(k.ID, APIKeyUpdates{Name: &name}); err != nil {
		t.Fatal(err)
	}
	log, _ := a.GetAPIKeyAuditLog(k.ID, Page{})
	if len(log) != 3 || log[1].Action != "updated" || log[1].Actor != "alice" || log[2].Actor != UnknownActor {
		t.Fatalf("audit log: %+v", log)
	}
	raw, _ = json.Marshal(log[0])
	m = map[string]any{}
	_ = json.Unmarshal(raw, &m)
	if _, ok := m["actor"]; !ok {
		t.Errorf("audit entry without actor: %s", raw)
	}
	if d, ok := m["details"].(map[string]any); !ok || d == nil {
		t.Errorf("audit entry details = %v", m["details"])
	}
}

func TestUsageThresholdOncePerWindowAndLevel(t *testing.T) {
	pgtest.EachStore(t, testUsageThresholdOncePerWindowAndLevel)
}

func testUsageThresholdOncePerWindowAndLevel(t *testing.T) {
	a, c, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "n", UserID: "u", RateLimit: &RateLimit{PerMinute: 10, PerHour: 1000, PerDay: 10000}})
	drain(t, a)
	thresholds := func() []map[string]any {
		var out []map[string]any
		for _, ev := range drain(t, a) {
			if ev.Type == EventUsageThreshold {
				out = append(out, eventData(t, ev))
			}
		}
		return out
	}
	for i := 1; i <= 7; i++ {
		if rl, _ := a.CheckRateLimit(k.ID); !rl.Allowed {
			t.Fatalf("request %d refused", i)
		}
	}
	if got := thresholds(); len(got) != 0 {
		t.Fatalf("below 80%%: %v", got)
	}
	_, _ = a.CheckRateLimit(k.ID) // 8 of 10: the warning
	got := thresholds()
	if len(got) != 1 || got[0]["window"] != "minute" || got[0]["level"] != "warning" || got[0]["used"] != float64(8) || got[0]["limit"] != float64(10) || got[0]["key_id"] != k.ID {
		t.Fatalf("at 80%%: %v", got)
	}
	if _, ok := got[0]["workspace_id"]; !ok {
		t.Fatal("threshold event without workspace_id")
	}
	_, _ = a.CheckRateLimit(k.ID) // 9: nothing new
	if got := thresholds(); len(got) != 0 {
		t.Fatalf("twice per window: %v", got)
	}
	_, _ = a.CheckRateLimit(k.ID) // 10: the limit
	if got := thresholds(); len(got) != 1 || got[0]["level"] != "limit" || got[0]["threshold"] != float64(1) {
		t.Fatalf("at the limit: %v", got)
	}
	for i := 0; i < 3; i++ {
		if rl, _ := a.CheckRateLimit(k.ID); rl.Allowed {
			t.Fatal("over the limit allowed")
		}
	}
	if got := thresholds(); len(got) != 0 {
		t.Fatalf("refusals repeat the event: %v", got)
	}
	// A new minute starts a new window: both levels can fire again.
	c.add(time.Minute)
	for i := 0; i < 10; i++ {
		_, _ = a.CheckRateLimit(k.ID)
	}
	if got := thresholds(); len(got) != 2 || got[0]["level"] != "warning" || got[1]["level"] != "limit" {
		t.Fatalf("next window: %v", got)
	}
}

func TestUsageThresholdSetting(t *testing.T) { pgtest.EachStore(t, testUsageThresholdSetting) }

func testUsageThresholdSetting(t *testing.T) {
	for in, want := range map[string]float64{"0.5": 0.5, "50": 0.5, "50%": 0.5, "100%": 1, "1": 1, " 90 ": 0.9} {
		if got, err := ParseUsageThreshold(in); err != nil || got != want {
			t.Errorf("ParseUsageThreshold(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "101", "abc", "NaN", "150%"} {
		if _, err := ParseUsageThreshold(in); field(err) != "usage_threshold" {
			t.Errorf("ParseUsageThreshold(%q): %v", in, err)
		}
	}
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 22, 10, 30, 15, 0, time.UTC)}
	a, _, err := Open(dir, Options{Now: c.now, UsageThreshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "n", UserID: "u", RateLimit: &RateLimit{PerMinute: 4, PerHour: 1000, PerDay: 10000}})
	drain(t, a)
	_, _ = a.CheckRateLimit(k.ID)
	_, _ = a.CheckRateLimit(k.ID)
	n := 0
	for _, ev := range drain(t, a) {
		if ev.Type == EventUsageThreshold {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("50%% of 4 after 2 requests: %d events", n)
	}
}

func FuzzParseUsageThreshold(f *testing.F) {
	for _, s := range []string{"0.8", "80", "80%", "", "1e309", "-0", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseUsageThreshold(s)
		if err == nil && (v <= 0 || v > 1) {
			t.Fatalf("%q accepted as %v", s, v)
		}
	})
}

func TestProjectLifecycleEvents(t *testing.T) { pgtest.EachStore(t, testProjectLifecycleEvents) }

func testProjectLifecycleEvents(t *testing.T) {
	a, _, _ := newAdmin(t)
	ws, _ := a.CreateWorkspace(CreateWorkspaceOptions{Name: "W", OwnerID: "o", ResourceLimits: &LimitOverrides{MaxProjects: intp(2)}})
	p, _ := a.CreateProject(ws.ID, CreateProjectOptions{Name: "One"})
	q, _ := a.CreateProject(ws.ID, CreateProjectOptions{Name: "Two"})
	drain(t, a)
	types := func() []string {
		var out []string
		for _, ev := range drain(t, a) {
			if strings.HasPrefix(ev.Type, "project.") {
				d := eventData(t, ev)
				out = append(out, ev.Type+":"+d["slug"].(string)+":"+d["status"].(string))
			}
		}
		return out
	}
	if _, err := a.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	_, _ = a.ArchiveProject(p.ID) // no change, no event
	if _, err := a.UnarchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	_, _ = a.UnarchiveProject(p.ID)
	if got := strings.Join(types(), " "); got != "project.archived:one:archived project.unarchived:one:active" {
		t.Fatalf("archive/unarchive events: %s", got)
	}
	// Unarchiving respects max_projects.
	_, _ = a.ArchiveProject(p.ID)
	if _, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: "Three"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UnarchiveProject(p.ID); code(err) != "ERR_LIMIT_EXCEEDED" {
		t.Fatalf("unarchive over max_projects: %v", err)
	}
	drain(t, a)
	if r, err := a.DeleteProject(q.ID); err != nil || !r.Success {
		t.Fatal(r, err)
	}
	if got := strings.Join(types(), " "); got != "project.deleted:two:deleted" {
		t.Fatalf("delete event: %s", got)
	}
	// Deleting the workspace archives its active projects, each announced.
	if _, err := a.DeleteWorkspace(ws.ID, "o"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(types(), " "); got != "project.archived:three:archived" {
		t.Fatalf("workspace delete events: %s", got)
	}
}

func intp(n int) *int { return &n }
