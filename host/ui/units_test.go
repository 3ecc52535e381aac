package ui

import (
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTakenPortIsReplacedAndRecorded(t *testing.T) {
	dir := t.TempDir()
	ln, st, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	taken := st.Port // ln keeps it taken, as another program would
	defer ln.Close()
	ln2, st2, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if st2.Port == taken || string(st2.Secret) != string(st.Secret) {
		t.Fatalf("second listen: port %d (taken %d), secret kept %v", st2.Port, taken, string(st2.Secret) == string(st.Secret))
	}
	again, err := loadState(dir)
	if err != nil || again.Port != st2.Port {
		t.Fatalf("recorded port %d (%v), want the new %d", again.Port, err, st2.Port)
	}
	if a := ln2.Addr().(*net.TCPAddr); !a.IP.IsLoopback() {
		t.Fatalf("listening on %v, want loopback only", a)
	}
}

func TestDamagedStateFileGetsAFreshSecret(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := loadState(dir)
	if err != nil || len(st.Secret) != 32 || st.Port != 0 {
		t.Fatalf("state %+v %v, want a fresh secret and no port", st, err)
	}
}

func TestTokens(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var tk tokens
	a := tk.issue(Grant{Person: "alice"}, now)
	b := tk.issue(Grant{Person: "bob"}, now)
	if a == b || len(a) != 48 {
		t.Fatalf("tokens %q %q, want distinct 24-byte hex", a, b)
	}
	if g, ok := tk.redeem(a, now); !ok || g.Person != "alice" {
		t.Fatalf("redeem: %+v %v", g, ok)
	}
	if _, ok := tk.redeem(a, now); ok {
		t.Fatal("a token redeemed twice")
	}
	if _, ok := tk.redeem(b, now.Add(TokenTTL+time.Second)); ok {
		t.Fatal("an expired token redeemed")
	}
	if _, ok := tk.redeem("", now); ok {
		t.Fatal("the empty token redeemed")
	}
}

func TestSessionSecrets(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(2_000_000, 0)
	good := sealSession(secret, Grant{Person: "alice", AllowActions: true, Expires: now.Add(time.Hour).Unix()})
	enc, sig, _ := strings.Cut(good, ".")
	flip := "A"
	if enc[0] == 'A' {
		flip = "B"
	}
	forged := sealSession([]byte("another secret, another data dir"), Grant{Person: "alice", Expires: now.Add(time.Hour).Unix()})
	for _, tc := range []struct {
		name, value string
		at          time.Time
		ok          bool
	}{
		{"valid", good, now, true},
		{"expired", good, now.Add(2 * time.Hour), false},
		{"other secret", forged, now, false},
		{"body changed", flip + enc[1:] + "." + sig, now, false},
		{"signature cut", enc + "." + sig[:10], now, false},
		{"no dot", enc, now, false},
		{"bad base64", "!!!." + sig, now, false},
		{"empty", "", now, false},
		{"no person", sealSession(secret, Grant{Expires: now.Add(time.Hour).Unix()}), now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := openSession(secret, tc.value, tc.at)
			if ok != tc.ok || (ok && (g.Person != "alice" || !g.AllowActions)) {
				t.Fatalf("openSession: %+v %v, want ok %v", g, ok, tc.ok)
			}
		})
	}
}

func FuzzOpenSession(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	f.Add(sealSession(secret, Grant{Person: "alice", Expires: 1 << 40}))
	f.Add("a.b")
	f.Add("")
	f.Fuzz(func(t *testing.T, v string) {
		g, ok := openSession(secret, v, time.Unix(0, 0))
		if ok && sealSession(secret, g) == "" {
			t.Fatal("an accepted session secret does not seal again")
		}
	})
}

func TestHostAndOrigin(t *testing.T) {
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:4000", true}, {"localhost:4000", true}, {"127.0.0.1:4001", false},
		{"evil.example:4000", false}, {"127.0.0.1", false}, {"[::1]:4000", false}, {"", false},
	} {
		if hostAllowed(tc.host, "4000") != tc.ok {
			t.Errorf("host %q: want %v", tc.host, tc.ok)
		}
	}
	for _, tc := range []struct {
		method, origin string
		ok             bool
	}{
		{"GET", "", true}, {"HEAD", "", true}, {"POST", "", false},
		{"POST", "http://127.0.0.1:4000", true}, {"POST", "http://localhost:4000", true},
		{"GET", "http://evil.example", false}, {"POST", "https://127.0.0.1:4000", false},
		{"POST", "http://127.0.0.1:4001", false}, {"POST", "null", false},
		{"GET", "http://127.0.0.1:4001", false}, {"GET", "http://127.0.0.1", false}, {"POST", "http://127.0.0.1:4000/", false},
	} {
		r := httptest.NewRequest(tc.method, "/", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if originAllowed(r, "4000") != tc.ok {
			t.Errorf("%s with Origin %q: want %v", tc.method, tc.origin, tc.ok)
		}
	}
	// A browser says where a request comes from: another loopback port is
	// the same site, not the same origin.
	for site, ok := range map[string]bool{"same-origin": true, "same-site": false, "cross-site": false, "none": false} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Sec-Fetch-Site", site)
		if originAllowed(r, "4000") != ok {
			t.Errorf("Sec-Fetch-Site %q: want %v", site, ok)
		}
	}
	for _, tc := range []struct {
		header, want string
	}{
		{"Bearer abc.def", "abc.def"}, {"bearer abc", "abc"}, {"Basic abc", ""}, {"Bearer", ""}, {"", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := bearer(r); got != tc.want {
			t.Errorf("Authorization %q: bearer %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestActionsBecomeToolCalls(t *testing.T) {
	for _, tc := range []struct {
		in         actionInput
		tool       string
		args       map[string]any
		field, why string
	}{
		{actionInput{Action: "move", Status: "todo"}, "task_update", map[string]any{"task_id": "T-1", "status": "todo"}, "", ""},
		{actionInput{Action: "move"}, "", nil, "status", "required"},
		{actionInput{Action: "move", Status: "blocked"}, "", nil, "action", "enum"},
		{actionInput{Action: "block", Reason: "waiting on review"}, "task_update", map[string]any{"task_id": "T-1", "status": "blocked", "blocked_reason": "waiting on review"}, "", ""},
		{actionInput{Action: "block", Reason: "  "}, "", nil, "reason", "required"},
		{actionInput{Action: "assign", Assignee: " bob "}, "task_update", map[string]any{"task_id": "T-1", "assignee": "bob"}, "", ""},
		{actionInput{Action: "assign"}, "", nil, "assignee", "required"},
		{actionInput{Action: "comment", Content: "fine"}, "thought_record", map[string]any{"task_id": "T-1", "type": "reflection", "content": "fine"}, "", ""},
		{actionInput{Action: "comment"}, "", nil, "content", "required"},
		{actionInput{}, "", nil, "action", "required"},
		{actionInput{Action: "delete"}, "", nil, "action", "enum"},
	} {
		tool, args, e := tc.in.toolCall("T-1")
		if tc.field != "" {
			if e == nil || e.Status != 400 || e.Details["field"] != tc.field || e.Details["constraint"] != tc.why {
				t.Errorf("%+v: %v, want 400 on %s (%s)", tc.in, e, tc.field, tc.why)
			}
			continue
		}
		if e != nil || tool != tc.tool || !reflect.DeepEqual(args, tc.args) {
			t.Errorf("%+v: %s %v %v, want %s %v", tc.in, tool, args, e, tc.tool, tc.args)
		}
	}
}

func TestPagingIsCappedAtAPage(t *testing.T) {
	for _, tc := range []struct {
		q             string
		offset, limit int
		field         string
	}{
		{"", 0, PageSize, ""},
		{"limit=10&offset=20", 20, 10, ""},
		{"limit=10000", 0, PageSize, ""},
		{"limit=0", 0, 0, "limit"},
		{"limit=x", 0, 0, "limit"},
		{"offset=-1", 0, 0, "offset"},
	} {
		r := httptest.NewRequest("GET", "/api/tasks?"+tc.q, nil)
		off, lim, e := parsePaging(r)
		if tc.field != "" {
			if e == nil || e.Details["field"] != tc.field {
				t.Errorf("%q: %v, want an error on %s", tc.q, e, tc.field)
			}
			continue
		}
		if e != nil || off != tc.offset || lim != tc.limit {
			t.Errorf("%q: offset %d limit %d %v", tc.q, off, lim, e)
		}
	}
}

func TestFilterMapsToTaskList(t *testing.T) {
	r := httptest.NewRequest("GET", "/board?project=web&q=parser+bug&assignee=bob&label=ui&priority=high", nil)
	got := queryFrom(r).listArgs("todo", 50, 50)
	want := map[string]any{"project": "web", "search": "parser bug", "assignee": "bob", "label": "ui", "priority": []string{"high"},
		"status": []string{"todo"}, "offset": 50, "limit": 50, "sort_by": "updated", "sort_order": "desc"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("task_list args %v, want %v", got, want)
	}
}

func TestJSONViewEscapes(t *testing.T) {
	out := string(jsonView(json.RawMessage(`{"<b>":"<script>alert(1)</script>","n":[1,true,null]}`)))
	if strings.Contains(out, "<script>") || strings.Contains(out, "<b>") || !strings.Contains(out, "&lt;script&gt;") {
		t.Fatalf("jsonView did not escape: %s", out)
	}
}

func TestChainPreviousFollowsEachChain(t *testing.T) {
	tr := []link{
		{Chain: "event", TaskID: "T-1", StoredHash: "e1"},
		{Chain: "thought", TaskID: "T-1", StoredHash: "t1"},
		{Chain: "event", TaskID: "T-1", StoredHash: "e2"},
		{Chain: "event", TaskID: "T-2", StoredHash: "x1"},
		{Chain: "thought", TaskID: "T-1", StoredHash: "t2"},
	}
	chainPrevious(tr)
	var got []string
	for _, l := range tr {
		got = append(got, l.PreviousHash)
	}
	if want := []string{"", "", "e1", "", "t1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("previous hashes %v, want %v", got, want)
	}
	if (link{Verdict: "verified"}).Broken() || !(link{Verdict: "broken"}).Broken() {
		t.Fatal("Broken misreads verdicts")
	}
}
