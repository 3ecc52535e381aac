package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// idemRig is an admin plugin without background work (nothing drains the
// outbox or delivers queued webhooks between two looks at the store), a
// second handle on its store, and a webhook receiver counting hits by path.
type idemRig struct {
	t    *testing.T
	p    *sdk.Plugin
	st   *store.Store
	url  string
	mu   sync.Mutex
	hits map[string]int
	n    int
}

func newIdemRig(t *testing.T) *idemRig {
	t.Setenv("CAIRN_ENV", "development") // the receiver is on loopback
	r := &idemRig{t: t, hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits[req.URL.Path]++
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	dir := t.TempDir()
	r.p = New()
	if err := sdktest.Configure(context.Background(), r.p, sdk.Config{DataDir: dir, Mode: "FULL", Settings: map[string]string{BackgroundSetting: "off"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), r.p) })
	st, err := store.OpenFor(dir, os.Getenv(store.SettingEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	r.st = st
	return r
}

func (r *idemRig) hitsAt(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[path]
}

func (r *idemRig) uniq(prefix string) string {
	r.n++
	return fmt.Sprintf("%s%d", prefix, r.n)
}

// call invokes tool as the local operator, under key when not empty.
func (r *idemRig) call(tool, key string, args any) (map[string]any, sdk.Result) {
	raw, _ := json.Marshal(args)
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "ops", Source: "env"})
	if key != "" {
		ctx = sdk.WithIdempotency(ctx, sdk.Idempotency{Key: key})
	}
	res := sdktest.Invoke(ctx, r.p, tool, raw)
	var out map[string]any
	if res.Err == nil {
		if err := json.Unmarshal(res.Output, &out); err != nil {
			r.t.Fatalf("%s: output %s: %v", tool, res.Output, err)
		}
	}
	return out, res
}

// must invokes without a key and fails the test on an error.
func (r *idemRig) must(tool string, args any) map[string]any {
	r.t.Helper()
	out, res := r.call(tool, "", args)
	if res.Err != nil {
		r.t.Fatalf("setup %s: %+v", tool, res.Err)
	}
	return out
}

// snapshot is everything the admin store holds: every bucket and, on
// PostgreSQL, the usage and delivery-queue tables. Any second effect of a
// call (a row, a count, an event in the outbox, a queued delivery, an
// audit entry) changes it.
func (r *idemRig) snapshot() string {
	r.t.Helper()
	var b strings.Builder
	if err := r.st.View(func(tx store.Tx) error {
		for _, name := range store.Buckets() {
			fmt.Fprintf(&b, "[%s]\n", name)
			if err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				fmt.Fprintf(&b, "%x=%x\n", k, v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		r.t.Fatal(err)
	}
	if pool := r.st.Postgres(); pool != nil {
		for _, table := range []string{store.UsageTable, store.DailyTable, store.QueueTable} {
			rows, err := pool.Query(context.Background(), "SELECT row_to_json(t)::text FROM "+table+" t")
			if err != nil {
				r.t.Fatal(err)
			}
			var lines []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					r.t.Fatal(err)
				}
				lines = append(lines, s)
			}
			rows.Close()
			sort.Strings(lines)
			fmt.Fprintf(&b, "[%s]\n%s\n", table, strings.Join(lines, "\n"))
		}
	}
	return b.String()
}

// idemCase is one admin write tool: setup makes fresh fixtures and returns
// the call's input, another input, and the receiver path its webhook
// deliveries go to ("" for none). creates says that every call without a
// key has an effect of its own.
type idemCase struct {
	tool    string
	setup   func(r *idemRig) (in, other map[string]any, path string)
	creates bool
}

func (r *idemRig) workspace() string {
	return r.must("admin_workspace_create", map[string]any{"name": r.uniq("ws")})["id"].(string)
}

func (r *idemRig) key() string {
	return r.must("admin_key_create", map[string]any{"name": r.uniq("k")})["id"].(string)
}

func (r *idemRig) member(ws string) string {
	u := r.uniq("user")
	r.must("admin_member_add", map[string]any{"workspace_id": ws, "user_id": u, "role": "member"})
	return u
}

func (r *idemRig) invitation(ws string) map[string]any {
	return r.must("admin_invitation_create", map[string]any{"workspace_id": ws, "email": r.uniq("u") + "@example.com", "role": "member"})
}

func (r *idemRig) project(ws string) string {
	return r.must("admin_project_create", map[string]any{"workspace_id": ws, "name": r.uniq("proj")})["id"].(string)
}

// hook registers a webhook of ws for every event, delivering to path.
func (r *idemRig) hook(ws, path string) string {
	out := r.must("admin_webhook_register", map[string]any{"url": r.url + path, "workspace_id": ws})
	return out["webhook"].(map[string]any)["id"].(string)
}

func idemCases() []idemCase {
	ids := func(field string, a, b string) (map[string]any, map[string]any) {
		return map[string]any{field: a}, map[string]any{field: b}
	}
	return []idemCase{
		{"admin_workspace_create", func(r *idemRig) (map[string]any, map[string]any, string) {
			return map[string]any{"name": r.uniq("new")}, map[string]any{"name": r.uniq("other")}, ""
		}, true},
		{"admin_workspace_update", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"workspace_id": ws, "name": "renamed"}, map[string]any{"workspace_id": ws, "name": "again"}, ""
		}, false},
		{"admin_workspace_delete", func(r *idemRig) (map[string]any, map[string]any, string) {
			a, b := ids("workspace_id", r.workspace(), r.workspace())
			return a, b, ""
		}, false},
		{"admin_member_add", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"workspace_id": ws, "user_id": "bob", "role": "member"}, map[string]any{"workspace_id": ws, "user_id": "carol", "role": "member"}, ""
		}, false},
		{"admin_member_update_role", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			u := r.member(ws)
			return map[string]any{"workspace_id": ws, "user_id": u, "role": "admin"}, map[string]any{"workspace_id": ws, "user_id": u, "role": "viewer"}, ""
		}, false},
		{"admin_member_remove", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"workspace_id": ws, "user_id": r.member(ws)}, map[string]any{"workspace_id": ws, "user_id": r.member(ws)}, ""
		}, false},
		{"admin_invitation_create", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"workspace_id": ws, "email": "a@example.com", "role": "member"}, map[string]any{"workspace_id": ws, "email": "b@example.com", "role": "member"}, ""
		}, true},
		{"admin_invitation_accept", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"token": r.invitation(ws)["token"], "user_id": "dave"}, map[string]any{"token": r.invitation(ws)["token"], "user_id": "erin"}, ""
		}, false},
		{"admin_invitation_revoke", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			a, b := ids("invitation_id", r.invitation(ws)["id"].(string), r.invitation(ws)["id"].(string))
			return a, b, ""
		}, false},
		{"admin_key_create", func(r *idemRig) (map[string]any, map[string]any, string) {
			return map[string]any{"name": "ci"}, map[string]any{"name": "cd"}, ""
		}, true},
		{"admin_key_update", func(r *idemRig) (map[string]any, map[string]any, string) {
			k := r.key()
			return map[string]any{"key_id": k, "name": "renamed"}, map[string]any{"key_id": k, "name": "again"}, ""
		}, false},
		{"admin_key_revoke", func(r *idemRig) (map[string]any, map[string]any, string) {
			a, b := ids("key_id", r.key(), r.key())
			return a, b, ""
		}, false},
		{"admin_key_rotate", func(r *idemRig) (map[string]any, map[string]any, string) {
			k := r.key()
			return map[string]any{"key_id": k}, map[string]any{"key_id": k, "grace_period_ms": 1000}, ""
		}, false},
		{"admin_key_check_rate_limit", func(r *idemRig) (map[string]any, map[string]any, string) {
			a, b := ids("key_id", r.key(), r.key())
			return a, b, ""
		}, true},
		{"admin_project_create", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"workspace_id": ws, "name": "Web"}, map[string]any{"workspace_id": ws, "name": "Api"}, ""
		}, false},
		{"admin_project_update", func(r *idemRig) (map[string]any, map[string]any, string) {
			p := r.project(r.workspace())
			return map[string]any{"project_id": p, "name": "renamed"}, map[string]any{"project_id": p, "name": "again"}, ""
		}, false},
		{"admin_project_archive", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			a, b := ids("project_id", r.project(ws), r.project(ws))
			return a, b, ""
		}, false},
		{"admin_project_unarchive", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			p, q := r.project(ws), r.project(ws)
			r.must("admin_project_archive", map[string]any{"project_id": p})
			r.must("admin_project_archive", map[string]any{"project_id": q})
			a, b := ids("project_id", p, q)
			return a, b, ""
		}, false},
		{"admin_project_delete", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			a, b := ids("project_id", r.project(ws), r.project(ws))
			return a, b, ""
		}, false},
		{"admin_webhook_register", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			return map[string]any{"url": r.url + "/a", "workspace_id": ws}, map[string]any{"url": r.url + "/b", "workspace_id": ws}, ""
		}, true},
		{"admin_webhook_update", func(r *idemRig) (map[string]any, map[string]any, string) {
			h := r.hook(r.workspace(), "/u")
			return map[string]any{"webhook_id": h, "description": "one"}, map[string]any{"webhook_id": h, "description": "two"}, ""
		}, false},
		{"admin_webhook_pause", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			a, b := ids("webhook_id", r.hook(ws, "/p"), r.hook(ws, "/p"))
			return a, b, ""
		}, false},
		{"admin_webhook_resume", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			h, g := r.hook(ws, "/r"), r.hook(ws, "/r")
			r.must("admin_webhook_pause", map[string]any{"webhook_id": h})
			r.must("admin_webhook_pause", map[string]any{"webhook_id": g})
			a, b := ids("webhook_id", h, g)
			return a, b, ""
		}, false},
		{"admin_webhook_unregister", func(r *idemRig) (map[string]any, map[string]any, string) {
			ws := r.workspace()
			a, b := ids("webhook_id", r.hook(ws, "/x"), r.hook(ws, "/x"))
			return a, b, ""
		}, false},
		{"admin_webhook_rotate_secret", func(r *idemRig) (map[string]any, map[string]any, string) {
			h := r.hook(r.workspace(), "/s")
			return map[string]any{"webhook_id": h}, map[string]any{"webhook_id": h, "secret": "whsec_a-secret-of-my-own"}, ""
		}, false},
		{"admin_webhook_test", func(r *idemRig) (map[string]any, map[string]any, string) {
			path := "/" + r.uniq("test")
			ws := r.workspace()
			a, b := ids("webhook_id", r.hook(ws, path), r.hook(ws, path))
			return a, b, path
		}, true},
		{"admin_event_trigger", func(r *idemRig) (map[string]any, map[string]any, string) {
			path := "/" + r.uniq("trigger")
			ws := r.workspace()
			r.hook(ws, path)
			return map[string]any{"event_type": "task.created", "workspace_id": ws}, map[string]any{"event_type": "task.updated", "workspace_id": ws}, path
		}, true},
	}
}

// TestIdempotencyEveryWriteTool is the proof of docs/decisions.md D32 for
// the admin area: every write tool declares HonoursIdempotency; under one
// key a repeat answers the first outcome and changes nothing in the store
// (and sends no second webhook request); the key with another input is a
// 409; without a key a creating call takes effect each time.
func TestIdempotencyEveryWriteTool(t *testing.T) { pgtest.EachStore(t, testIdempotencyEveryWriteTool) }

func testIdempotencyEveryWriteTool(t *testing.T) {
	r := newIdemRig(t)
	cases := map[string]idemCase{}
	for _, c := range idemCases() {
		cases[c.tool] = c
	}
	for _, ti := range sdktest.Tools(r.p) {
		if ti.Toolset != "admin" || ti.ReadOnly {
			continue
		}
		if !ti.HonoursIdempotency {
			t.Errorf("%s does not declare HonoursIdempotency", ti.Name)
		}
		if _, ok := cases[ti.Name]; !ok {
			t.Errorf("write tool %s has no case here", ti.Name)
		}
	}
	for _, c := range idemCases() {
		t.Run(c.tool, func(t *testing.T) {
			r.t = t
			in, other, path := c.setup(r)
			key := "relay-1:" + r.uniq(c.tool)
			before := r.snapshot()
			first, res := r.call(c.tool, key, in)
			if res.Err != nil {
				t.Fatalf("first call: %+v", res.Err)
			}
			once := r.snapshot()
			if once == before {
				t.Fatal("the first call changed nothing in the store")
			}
			hits := 0
			if path != "" {
				if hits = r.hitsAt(path); hits != 1 {
					t.Fatalf("the first call reached the receiver %d times", hits)
				}
			}
			again, res := r.call(c.tool, key, in)
			if res.Err != nil {
				t.Fatalf("repeat: %+v", res.Err)
			}
			if !reflect.DeepEqual(first, again) {
				t.Fatalf("repeat answered\n%v\nfirst\n%v", again, first)
			}
			if r.snapshot() != once {
				t.Fatal("the repeat changed the store")
			}
			if path != "" && r.hitsAt(path) != hits {
				t.Fatalf("the repeat reached the receiver again (%d requests)", r.hitsAt(path))
			}
			_, res = r.call(c.tool, key, other)
			if res.Err == nil || res.Status != 409 || res.Err.Details["field"] != "idempotencyKey" || res.Err.Details["constraint"] != "sameCall" {
				t.Fatalf("same key, other input: %d %+v", res.Status, res.Err)
			}
			if r.snapshot() != once {
				t.Fatal("the refused call changed the store")
			}
			if !c.creates {
				return
			}
			prev := once
			for i := range 2 {
				if _, res := r.call(c.tool, "", in); res.Err != nil {
					t.Fatalf("call %d without a key: %+v", i, res.Err)
				}
				now := r.snapshot()
				if now == prev {
					t.Fatalf("call %d without a key changed nothing", i)
				}
				prev = now
			}
			if path != "" && r.hitsAt(path) != hits+2 {
				t.Fatalf("two calls without a key reached the receiver %d times", r.hitsAt(path)-hits)
			}
		})
	}
}

// A failed call records nothing: the same key carries the corrected call.
// A plaintext key returned again by a repeat is the one that works.
func TestIdempotencyFailureAndSecret(t *testing.T) {
	pgtest.EachStore(t, testIdempotencyFailureAndSecret)
}

func testIdempotencyFailureAndSecret(t *testing.T) {
	r := newIdemRig(t)
	_, res := r.call("admin_key_create", "k-1", map[string]any{"name": "ci", "expires_at": "2001-01-01T00:00:00Z"})
	if res.Err == nil || res.Status != 400 {
		t.Fatalf("a key expiring in the past: %d %+v", res.Status, res.Err)
	}
	first, res := r.call("admin_key_create", "k-1", map[string]any{"name": "ci"})
	if res.Err != nil {
		t.Fatalf("the corrected call under the same key: %+v", res.Err)
	}
	again, _ := r.call("admin_key_create", "k-1", map[string]any{"name": "ci"})
	plain, _ := first["plaintext_key"].(string)
	if plain == "" || again["plaintext_key"] != plain || again["id"] != first["id"] {
		t.Fatalf("repeat %v, first %v", again, first)
	}
	if v, _ := r.call("admin_key_validate", "", map[string]any{"key": plain}); v["valid"] != true {
		t.Fatalf("the replayed plaintext does not validate: %v", v)
	}
	if list := r.must("admin_key_list", map[string]any{}); list["count"] != 1.0 {
		t.Fatalf("keys: %v", list["count"])
	}
	// The plaintext is nowhere in the store, sealed or not.
	if strings.Contains(r.snapshot(), fmt.Sprintf("%x", plain)) {
		t.Fatal("the plaintext key is in the store")
	}
	// Another principal sending the same key gets a call of its own.
	ctx := sdk.WithIdempotency(sdk.WithCaller(context.Background(), sdk.Caller{ID: "eve", Source: "client"}), sdk.Idempotency{Key: "k-1"})
	res = sdktest.Invoke(ctx, r.p, "admin_key_create", []byte(`{"name":"ci"}`))
	var eve map[string]any
	if res.Err != nil || json.Unmarshal(res.Output, &eve) != nil || eve["id"] == first["id"] || eve["plaintext_key"] == plain {
		t.Fatalf("another principal: %s %+v", res.Output, res.Err)
	}
}
