package accounts

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newAdmin(t testing.TB) (*Admin, *clock, string) {
	t.Helper()
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 22, 10, 30, 15, 0, time.UTC)}
	a, st, err := Open(dir, Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return a, c, dir
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func code(err error) string {
	if e, ok := errs.As(err); ok {
		return e.Code
	}
	return ""
}

func field(err error) any {
	if e, ok := errs.As(err); ok {
		return e.Details["field"]
	}
	return nil
}

func TestKeyLifecycleAndValidationReasons(t *testing.T) {
	pgtest.EachStore(t, testKeyLifecycleAndValidationReasons)
}

func testKeyLifecycleAndValidationReasons(t *testing.T) {
	a, c, _ := newAdmin(t)
	exp := FormatTime(c.now().Add(time.Hour))
	k, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "ci", UserID: "u1", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if !CheckKeyFormat(k.PlaintextKey) || !strings.HasPrefix(k.PlaintextKey, "cairn_") || len(k.PlaintextKey) != 70 {
		t.Fatalf("plaintext %q", k.PlaintextKey)
	}
	if k.KeyHash != HashKey(k.PlaintextKey) || strings.Contains(k.KeyPreview, k.PlaintextKey[6:60]) {
		t.Fatalf("hash or preview wrong: %+v", k)
	}
	if strings.Join(k.Scopes, ",") != "read,write" || k.RateLimit != DefaultRateLimit || k.Status != KeyActive {
		t.Fatalf("defaults: %+v", k)
	}
	pub, _ := k.ToJSON(false)
	sens, _ := k.ToJSON(true)
	if strings.Contains(string(pub), "key_hash") || !strings.Contains(string(sens), `"key_hash":"`+k.KeyHash) {
		t.Fatalf("ToJSON: %s / %s", pub, sens)
	}
	stored, _ := a.GetAPIKeyByID(k.ID)
	if stored.PlaintextKey != "" {
		t.Fatal("plaintext stored")
	}
	if got, _ := a.GetAPIKeyByHash(k.KeyHash); got == nil || got.ID != k.ID {
		t.Fatal("lookup by hash")
	}
	for _, tc := range []struct {
		name, key, reason string
	}{
		{"empty", "", ReasonMalformed},
		{"short", "cairn_abc", ReasonMalformed},
		{"uppercase hex", "cairn_" + strings.ToUpper(k.PlaintextKey[6:]), ReasonMalformed},
		{"no prefix", k.PlaintextKey[6:], ReasonMalformed},
		{"trailing newline", k.PlaintextKey + "\n", ReasonMalformed},
		{"65 hex", k.PlaintextKey + "0", ReasonMalformed},
		{"unknown", "cairn_" + strings.Repeat("0", 64), ReasonUnknown},
		{"other prefix unknown", "acme_" + strings.Repeat("a", 64), ReasonUnknown},
		{"valid", k.PlaintextKey, ""},
	} {
		v, err := a.ValidateAPIKey(tc.key)
		if err != nil || v.Reason != tc.reason || v.Valid != (tc.reason == "") {
			t.Errorf("%s: %+v %v", tc.name, v, err)
		}
	}
	c.add(2 * time.Hour)
	if v, _ := a.ValidateAPIKey(k.PlaintextKey); v.Valid || v.Reason != ReasonExpired {
		t.Fatalf("expired: %+v", v)
	}
	if got, _ := a.GetAPIKeyByHash(k.KeyHash); got != nil {
		t.Fatal("expired key found by hash")
	}
	k2, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "b", UserID: "u1"})
	if _, err := a.RevokeAPIKey(k2.ID, "boss"); err != nil {
		t.Fatal(err)
	}
	if v, _ := a.ValidateAPIKey(k2.PlaintextKey); v.Valid || v.Reason != ReasonRevoked {
		t.Fatalf("revoked: %+v", v)
	}
	log, _ := a.GetAPIKeyAuditLog(k2.ID, Page{})
	if len(log) != 2 || log[0].Action != "created" || log[1].Action != "revoked" || log[1].Actor != "boss" {
		t.Fatalf("audit: %+v", log)
	}
	if got, _ := a.GetAPIKeyByID("key_missing"); got != nil {
		t.Fatal("unknown id")
	}
}

func TestCreateKeyValidation(t *testing.T) { pgtest.EachStore(t, testCreateKeyValidation) }

func testCreateKeyValidation(t *testing.T) {
	a, c, _ := newAdmin(t)
	past := FormatTime(c.now().Add(-time.Minute))
	bad := "yesterday"
	ws := "ws_nope"
	for _, tc := range []struct {
		name  string
		o     CreateAPIKeyOptions
		field string
	}{
		{"no name", CreateAPIKeyOptions{UserID: "u"}, "name"},
		{"long name", CreateAPIKeyOptions{Name: strings.Repeat("n", 256), UserID: "u"}, "name"},
		{"no user", CreateAPIKeyOptions{Name: "n"}, "user_id"},
		{"zero rate", CreateAPIKeyOptions{Name: "n", UserID: "u", RateLimit: &RateLimit{PerMinute: 0, PerHour: 1, PerDay: 1}}, "rate_limit.per_minute"},
		{"past expiry", CreateAPIKeyOptions{Name: "n", UserID: "u", ExpiresAt: &past}, "expires_at"},
		{"bad expiry", CreateAPIKeyOptions{Name: "n", UserID: "u", ExpiresAt: &bad}, "expires_at"},
		{"empty scope", CreateAPIKeyOptions{Name: "n", UserID: "u", Scopes: []string{""}}, "scopes[0]"},
		{"unknown workspace", CreateAPIKeyOptions{Name: "n", UserID: "u", WorkspaceID: &ws}, "workspace_id"},
	} {
		_, err := a.CreateAPIKey(tc.o)
		if err == nil || field(err) != tc.field {
			t.Errorf("%s: %v (field %v)", tc.name, err, field(err))
		}
	}
	if _, err := New(a.Store(), Options{KeyPrefix: "Bad_Prefix"}); err == nil {
		t.Error("bad prefix accepted")
	}
	b, _ := New(a.Store(), Options{KeyPrefix: "acme"})
	k, err := b.CreateAPIKey(CreateAPIKeyOptions{Name: "n", UserID: "u"})
	if err != nil || !strings.HasPrefix(k.PlaintextKey, "acme_") {
		t.Fatalf("prefix: %v %v", k, err)
	}
	if v, _ := a.ValidateAPIKey(k.PlaintextKey); !v.Valid {
		t.Fatal("a key with another prefix must validate by hash")
	}
}

func TestRotationStopsOldKeyAtOnceUnlessGrace(t *testing.T) {
	pgtest.EachStore(t, testRotationStopsOldKeyAtOnceUnlessGrace)
}

func testRotationStopsOldKeyAtOnceUnlessGrace(t *testing.T) {
	a, c, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "svc", UserID: "u", Scopes: []string{"read"}, RateLimit: &RateLimit{5, 50, 500}})
	r, err := a.RotateAPIKey(k.ID, RotateOptions{RotatedBy: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if r.NewKey.RotatedFrom == nil || *r.NewKey.RotatedFrom != k.ID || r.NewKey.PlaintextKey == "" || r.NewKey.RateLimit != (RateLimit{5, 50, 500}) || r.NewKey.Scopes[0] != "read" {
		t.Fatalf("new key: %+v", r.NewKey)
	}
	if v, _ := a.ValidateAPIKey(k.PlaintextKey); v.Valid || v.Reason != ReasonRevoked {
		t.Fatalf("old key after rotation: %+v", v)
	}
	if v, _ := a.ValidateAPIKey(r.NewKey.PlaintextKey); !v.Valid {
		t.Fatal("new key invalid")
	}
	if _, err := a.RotateAPIKey(k.ID, RotateOptions{}); code(err) != errs.Conflict {
		t.Fatalf("rotating a revoked key: %v", err)
	}
	r2, _ := a.RotateAPIKey(r.NewKey.ID, RotateOptions{GracePeriodMs: 60_000})
	if v, _ := a.ValidateAPIKey(r.NewKey.PlaintextKey); !v.Valid || !v.InGracePeriod {
		t.Fatalf("grace: %+v", v)
	}
	c.add(61 * time.Second)
	if v, _ := a.ValidateAPIKey(r.NewKey.PlaintextKey); v.Valid {
		t.Fatal("grace did not end")
	}
	if v, _ := a.ValidateAPIKey(r2.NewKey.PlaintextKey); !v.Valid {
		t.Fatal("newest key invalid")
	}
	if _, err := a.RotateAPIKey(r2.NewKey.ID, RotateOptions{GracePeriodMs: -1}); field(err) != "grace_period_ms" {
		t.Fatalf("negative grace: %v", err)
	}
}

func TestRateLimitCountsExactlyUnderConcurrency(t *testing.T) {
	pgtest.EachStore(t, testRateLimitCountsExactlyUnderConcurrency)
}

func testRateLimitCountsExactlyUnderConcurrency(t *testing.T) {
	a, c, dir := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "rl", UserID: "u", RateLimit: &RateLimit{PerMinute: 40, PerHour: 1000, PerDay: 10000}})
	// A second store on the same data: another server on PostgreSQL; on
	// bbolt a second Store of this process, sharing its handle.
	st2, err := store.OpenFor(dir, os.Getenv(store.SettingEnv))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(st2, Options{Now: c.now})
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 70; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lib := a
			if i%2 == 1 {
				lib = b
			}
			r, err := lib.CheckRateLimit(k.ID)
			if err != nil {
				t.Error(err)
				return
			}
			if r.Allowed {
				allowed.Add(1)
			} else {
				refused.Add(1)
			}
		}(i)
	}
	wg.Wait()
	if allowed.Load() != 40 || refused.Load() != 30 {
		t.Fatalf("allowed %d refused %d, want 40/30", allowed.Load(), refused.Load())
	}
	u, _ := a.GetAPIKeyUsage(k.ID, UsageOptions{})
	if u.TotalRequests != 40 || u.Minute.Used != 40 || u.Hour.Used != 40 || u.Day.Used != 40 || len(u.Daily) != 1 || u.Daily[0].Requests != 40 {
		t.Fatalf("refused requests must count nowhere: %+v", u)
	}
	r, _ := a.CheckRateLimit(k.ID)
	if r.Allowed || r.LimitedBy[0] != "minute" || r.Remaining.PerMinute != 0 || r.Remaining.PerHour != 960 || r.ResetAt.PerMinute != "2026-11-22T10:31:00.000Z" || r.RetryAt != r.ResetAt.PerMinute {
		t.Fatalf("refusal: %+v", r)
	}
	c.add(time.Minute)
	r, _ = a.CheckRateLimit(k.ID)
	if !r.Allowed || r.Remaining.PerMinute != 39 || r.Remaining.PerHour != 959 || r.Remaining.PerDay != 9959 {
		t.Fatalf("after the minute: %+v", r)
	}
	if _, err := a.CheckRateLimit("key_missing"); code(err) != errs.NotFound {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestHourWindowRefusesAllOrNothing(t *testing.T) {
	pgtest.EachStore(t, testHourWindowRefusesAllOrNothing)
}

func testHourWindowRefusesAllOrNothing(t *testing.T) {
	a, c, _ := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "rl", UserID: "u", RateLimit: &RateLimit{PerMinute: 3, PerHour: 4, PerDay: 100}})
	for i := 0; i < 3; i++ {
		if r, _ := a.CheckRateLimit(k.ID); !r.Allowed {
			t.Fatal(i)
		}
	}
	c.add(time.Minute)
	if r, _ := a.CheckRateLimit(k.ID); !r.Allowed || r.Remaining.PerHour != 0 {
		t.Fatalf("%+v", r)
	}
	r, _ := a.CheckRateLimit(k.ID)
	if r.Allowed || strings.Join(r.LimitedBy, ",") != "hour" || r.Remaining.PerMinute != 2 {
		t.Fatalf("hour limit: %+v", r)
	}
	if u, _ := a.GetAPIKeyUsage(k.ID, UsageOptions{}); u.Minute.Used != 1 || u.Day.Used != 4 {
		t.Fatalf("a refusal must not count in the minute or day window: %+v", u)
	}
}

func TestMembersRules(t *testing.T) { pgtest.EachStore(t, testMembersRules) }

func testMembersRules(t *testing.T) {
	a, _, _ := newAdmin(t)
	ws, err := a.CreateWorkspace(CreateWorkspaceOptions{Name: "Team", OwnerID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "bob", Role: RoleAdmin, InvitedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "carol", Role: RoleOwner, InvitedBy: "bob"}); code(err) != errs.Forbidden {
		t.Fatalf("admin granted owner: %v", err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "carol", Role: RoleMember, InvitedBy: "mallory"}); code(err) != errs.Forbidden {
		t.Fatalf("outsider added a member: %v", err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "carol", Role: RoleViewer, InvitedBy: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "carol", Role: RoleViewer, InvitedBy: "bob"}); code(err) != errs.Conflict {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := a.UpdateMemberRole(ws.ID, "alice", RoleAdmin, "alice"); code(err) != errs.Conflict {
		t.Fatalf("last owner demoted: %v", err)
	}
	if ok, err := a.RemoveMember(ws.ID, "alice", "alice"); ok || code(err) != errs.Conflict {
		t.Fatalf("last owner removed: %v %v", ok, err)
	}
	if _, err := a.UpdateMemberRole(ws.ID, "bob", RoleOwner, "bob"); code(err) != errs.Forbidden {
		t.Fatalf("admin promoted self to owner: %v", err)
	}
	if _, err := a.UpdateMemberRole(ws.ID, "bob", RoleOwner, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateMemberRole(ws.ID, "alice", RoleMember, "bob"); err != nil {
		t.Fatalf("two owners: demoting one is fine: %v", err)
	}
	if ok, err := a.RemoveMember(ws.ID, "carol", "carol"); !ok || err != nil {
		t.Fatalf("leaving: %v %v", ok, err)
	}
	ms, _ := a.ListMembers(ws.ID, ListMembersOptions{})
	if len(ms) != 2 || ms[0].UserID != "bob" || ms[0].Role != RoleOwner {
		t.Fatalf("members: %+v", ms)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "x", Role: "king", InvitedBy: "bob"}); field(err) != "role" {
		t.Fatalf("bad role: %v", err)
	}
}

func TestWorkspaceLimitsAndValidation(t *testing.T) {
	pgtest.EachStore(t, testWorkspaceLimitsAndValidation)
}

func testWorkspaceLimitsAndValidation(t *testing.T) {
	a, _, _ := newAdmin(t)
	for _, tc := range []struct {
		name  string
		o     CreateWorkspaceOptions
		field string
	}{
		{"no name", CreateWorkspaceOptions{OwnerID: "o"}, "name"},
		{"blank name", CreateWorkspaceOptions{Name: "   ", OwnerID: "o"}, "name"},
		{"256 chars", CreateWorkspaceOptions{Name: strings.Repeat("é", 256), OwnerID: "o"}, "name"},
		{"no owner", CreateWorkspaceOptions{Name: "n"}, "owner_id"},
		{"negative limit", CreateWorkspaceOptions{Name: "n", OwnerID: "o", ResourceLimits: &LimitOverrides{MaxMembers: ptr(-1)}}, "resource_limits.max_members"},
	} {
		if _, err := a.CreateWorkspace(tc.o); field(err) != tc.field {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	ws, err := a.CreateWorkspace(CreateWorkspaceOptions{Name: strings.Repeat("é", 255), OwnerID: "o", ResourceLimits: &LimitOverrides{MaxMembers: ptr(2), MaxProjects: ptr(1)}})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultResourceLimits
	want.MaxMembers, want.MaxProjects = 2, 1
	if ws.ResourceLimits != want {
		t.Fatalf("limits %+v", ws.ResourceLimits)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "b", Role: RoleMember, InvitedBy: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "c", Role: RoleMember, InvitedBy: "o"}); code(err) != errs.LimitExceeded {
		t.Fatalf("max_members: %v", err)
	}
	if _, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: "One"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: "Two"}); code(err) != errs.LimitExceeded {
		t.Fatalf("max_projects: %v", err)
	}
	res, _ := a.DeleteWorkspace(ws.ID, "o")
	got, _ := a.GetWorkspace(ws.ID)
	if !res.Success || res.ArchivedProjects != 1 || got.Status != WorkspaceArchived {
		t.Fatalf("delete: %+v %+v", res, got)
	}
}

func ptr[T any](v T) *T { return &v }

func TestInvitationsWorkOnceAndExpire(t *testing.T) {
	pgtest.EachStore(t, testInvitationsWorkOnceAndExpire)
}

func testInvitationsWorkOnceAndExpire(t *testing.T) {
	a, c, _ := newAdmin(t)
	ws, _ := a.CreateWorkspace(CreateWorkspaceOptions{Name: "T", OwnerID: "alice"})
	inv, err := a.InviteMember(ws.ID, InviteMemberOptions{Email: "dev@example.com", Role: RoleMember, InvitedBy: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Token) < 4+43 || inv.ExpiresAt != FormatTime(c.now().Add(7*24*time.Hour)) {
		t.Fatalf("invitation %+v", inv)
	}
	list, _ := a.ListInvitations(ws.ID, ListInvitationsOptions{})
	raw, _ := json.Marshal(list)
	if strings.Contains(string(raw), inv.Token) || strings.Contains(string(raw), HashKey(inv.Token)) {
		t.Fatal("listing leaks the token")
	}
	r, err := a.AcceptInvitation(inv.Token, "")
	if err != nil || !r.Success || r.Member.UserID != "dev@example.com" || r.Member.Role != RoleMember {
		t.Fatalf("accept: %+v %v", r, err)
	}
	if r, _ := a.AcceptInvitation(inv.Token, "other"); r.Success || r.Reason != InviteReasonUsed {
		t.Fatalf("second use: %+v", r)
	}
	if r, _ := a.AcceptInvitation("inv_forged", ""); r.Reason != InviteReasonInvalid {
		t.Fatalf("forged: %+v", r)
	}
	late, _ := a.InviteMember(ws.ID, InviteMemberOptions{Email: "late@example.com", Role: RoleViewer, InvitedBy: "alice"})
	gone, _ := a.InviteMember(ws.ID, InviteMemberOptions{Email: "gone@example.com", Role: RoleViewer, InvitedBy: "alice"})
	if ok, _ := a.RevokeInvitation(gone.ID); !ok {
		t.Fatal("revoke")
	}
	if r, _ := a.AcceptInvitation(gone.Token, ""); r.Reason != InviteReasonRevoked {
		t.Fatalf("revoked: %+v", r)
	}
	c.add(7*24*time.Hour + time.Millisecond)
	if r, _ := a.AcceptInvitation(late.Token, ""); r.Success || r.Reason != InviteReasonExpired {
		t.Fatalf("expired: %+v", r)
	}
	if _, err := a.InviteMember(ws.ID, InviteMemberOptions{Email: "not an email", Role: RoleViewer, InvitedBy: "alice"}); field(err) != "email" {
		t.Fatalf("email: %v", err)
	}
	if _, err := a.InviteMember(ws.ID, InviteMemberOptions{Email: "x@example.com", Role: RoleOwner, InvitedBy: "dev@example.com"}); code(err) != errs.Forbidden {
		t.Fatalf("member invited an owner: %v", err)
	}
}

func TestProjectsSlugsAndEvent(t *testing.T) { pgtest.EachStore(t, testProjectsSlugsAndEvent) }

func testProjectsSlugsAndEvent(t *testing.T) {
	a, _, _ := newAdmin(t)
	ws, _ := a.CreateWorkspace(CreateWorkspaceOptions{Name: "T", OwnerID: "o"})
	for _, tc := range []struct{ name, slug, field string }{
		{"Web", "Bad Slug", "slug"},
		{"Web", "-dash", "slug"},
		{"Web", strings.Repeat("a", 64), "slug"},
		{"!!!", "", "slug"},
		{"", "ok", "name"},
	} {
		if _, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: tc.name, Slug: tc.slug}); field(err) != tc.field {
			t.Errorf("%q/%q: %v", tc.name, tc.slug, err)
		}
	}
	for name, want := range map[string]string{"Web App": "web-app", "  API v2!! ": "api-v2", strings.Repeat("Ab ", 40): strings.TrimRight(strings.Repeat("ab-", 21), "-")} {
		if got := Slugify(name); got != want || !SlugPattern().MatchString(got) {
			t.Errorf("Slugify(%q) = %q, want %q", name, got, want)
		}
	}
	p, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: "Web App"})
	if err != nil || p.Slug != "web-app" {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := a.CreateProject(ws.ID, CreateProjectOptions{Name: "x", Slug: "web-app"}); code(err) != errs.Conflict {
		t.Fatalf("duplicate slug: %v", err)
	}
	var events []store.Event
	if _, err := a.Store().DrainOutbox(func(ev store.Event) error { events = append(events, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events {
		if ev.Type == EventProjectCreated {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			found = d["slug"] == "web-app"
		}
	}
	if !found {
		t.Fatalf("no project.created with the slug in %+v", events)
	}
	if n, _ := a.Store().DrainOutbox(func(store.Event) error { return nil }); n != 0 {
		t.Fatal("outbox not drained")
	}
	if _, err := a.Store().DrainOutbox(func(store.Event) error { return errors.New("x") }); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.GetProject("web-app"); got == nil || got.ID != p.ID {
		t.Fatal("get by slug")
	}
}

func TestStoreSurvivesReopen(t *testing.T) { pgtest.EachStore(t, testStoreSurvivesReopen) }

func testStoreSurvivesReopen(t *testing.T) {
	a, c, dir := newAdmin(t)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "p", UserID: "u"})
	b, _, err := Open(dir, Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := b.ValidateAPIKey(k.PlaintextKey); !v.Valid {
		t.Fatal("key lost across reopen")
	}
}

func FuzzValidateAPIKey(f *testing.F) {
	a, _, _ := newAdmin(f)
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "f", UserID: "u"})
	for _, s := range []string{k.PlaintextKey, "", "cairn_", "cairn_" + strings.Repeat("g", 64), "x_" + strings.Repeat("0", 64), "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := a.ValidateAPIKey(s)
		if err != nil {
			t.Fatal(err)
		}
		if !CheckKeyFormat(s) && v.Reason != ReasonMalformed {
			t.Fatalf("%q: %+v", s, v)
		}
		if v.Valid != (s == k.PlaintextKey) {
			t.Fatalf("%q validity %v", s, v.Valid)
		}
	})
}
