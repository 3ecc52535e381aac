package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// toolError is the error envelope of a tool result, or nil for a success.
func toolError(res map[string]any) map[string]any {
	if res == nil || res["isError"] != true {
		return nil
	}
	sc, _ := res["structuredContent"].(map[string]any)
	e, _ := sc["error"].(map[string]any)
	return e
}

// A key names one call (docs/decisions.md D42): over HTTP, an
// Idempotency-Key already used for task_create, task_update,
// thought_record, an sdd write or an admin write answers a different call
// with 409 naming the key, and the call does not run; the same call under
// it is the first outcome again; 20 different creates at once under one key
// make one task and 19 refusals. Before, the core tools answered the other
// call OK with the first outcome and dropped its write.
func TestReusedKeyForAnotherCallIsRefused(t *testing.T) {
	w := newWorkspace(t)
	srv := startHTTPServer(t, w, []string{"CAIRN_PROJECT=web", "CAIRN_TOOLSETS=core,sdd,admin"})
	call := func(key, name string, args any) map[string]any {
		t.Helper()
		res, err := statelessCall(srv.url, key, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	ok := func(key, name string, args any) map[string]any {
		t.Helper()
		res := call(key, name, args)
		if e := toolError(res); e != nil {
			t.Fatalf("%s: %v", name, e)
		}
		sc, _ := res["structuredContent"].(map[string]any)
		return sc
	}
	refused := func(key, name string, args any) {
		t.Helper()
		e := toolError(call(key, name, args))
		msg, _ := e["message"].(string)
		if e == nil || e["code"] != "ERR_CONFLICT" || !strings.Contains(msg, fmt.Sprintf("Idempotency-Key %q was already used for another call", key)) {
			t.Fatalf("%s under a key used for another call: %v; want 409 ERR_CONFLICT naming the key", name, e)
		}
		if d, _ := e["details"].(map[string]any); d["field"] != "Idempotency-Key" || d["constraint"] != "sameCall" {
			t.Fatalf("%s: details %v; want field Idempotency-Key, constraint sameCall", name, e["details"])
		}
	}
	total := func() float64 {
		t.Helper()
		return ok("", "task_list", map[string]any{"project": "web"})["total_count"].(float64)
	}
	chain := func(id string) float64 {
		t.Helper()
		return ok("", "audit_verify_chain", map[string]any{"task_id": id})["total_records"].(float64)
	}

	first := ok("k-create", "task_create", map[string]any{"title": "first"})
	refused("k-create", "task_create", map[string]any{"title": "second"})
	refused("k-create", "task_update", map[string]any{"task_id": first["task_id"], "status": "todo"})
	if again := ok("k-create", "task_create", map[string]any{"title": "first"}); again["task_id"] != first["task_id"] {
		t.Fatalf("the same call under its key made %v; want the first outcome %v", again["task_id"], first["task_id"])
	}
	if n := total(); n != 1 {
		t.Fatalf("%v tasks; want 1: a refused call must not write", n)
	}

	id := first["task_id"]
	ok("k-update", "task_update", map[string]any{"task_id": id, "status": "todo"})
	links := chain(id.(string))
	refused("k-update", "task_update", map[string]any{"task_id": id, "status": "in_progress"})
	if got := ok("", "task_get", map[string]any{"task_id": id}); got["status"] != "todo" {
		t.Fatalf("status %v after a refused update; want todo", got["status"])
	}

	ok("k-thought", "thought_record", map[string]any{"task_id": id, "type": "decision", "content": "one"})
	refused("k-thought", "thought_record", map[string]any{"task_id": id, "type": "decision", "content": "two"})
	if n := chain(id.(string)); n != links+1 {
		t.Fatalf("%v chain records; want %v: one thought, the refused one not appended", n, links+1)
	}

	ok("k-sdd", "sdd_state", map[string]any{"action": "set", "keyPath": "a.b", "value": 1})
	refused("k-sdd", "sdd_state", map[string]any{"action": "set", "keyPath": "a.b", "value": 2})
	ok("k-admin", "admin_workspace_create", map[string]any{"name": "one"})
	refused("k-admin", "admin_workspace_create", map[string]any{"name": "two"})

	// 20 different creates at once under one key: one task.
	const racers = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := statelessCall(srv.url, "k-race", "task_create", map[string]any{"title": fmt.Sprint("racer ", i)})
			mu.Lock()
			defer mu.Unlock()
			switch e := toolError(res); {
			case err != nil:
				t.Errorf("racer %d: %v", i, err)
			case e == nil:
				won++
			case e["code"] == "ERR_CONFLICT":
				lost++
			default:
				t.Errorf("racer %d: %v", i, e)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != racers-1 {
		t.Fatalf("%d creates under one key: %d answered OK, %d refused; want 1 and %d", racers, won, lost, racers-1)
	}
	if n := total(); n != 2 {
		t.Fatalf("%v tasks after the race; want 2 (the first and one racer)", n)
	}
}

// Over stdio the same holds for _meta["io.cairn/idempotencyKey"], and for a
// client that reuses a JSON-RPC id (the relay's key is its session and the
// id): a reused id with another call is a 409 that says to use a new id,
// and the call does not run. Through the daemon and with --no-daemon.
func TestReusedKeyForAnotherCallIsRefusedOverStdio(t *testing.T) {
	for _, mode := range [][]string{sharedEnv, {"CAIRN_DAEMON=off"}} {
		t.Run(mode[0], func(t *testing.T) {
			w := newWorkspace(t)
			r := startRaw(t, w, append([]string{"CAIRN_PROJECT=web"}, mode...)...)
			r.initialize()
			call := func(id float64, name string, args map[string]any, key string) map[string]any {
				params := map[string]any{"name": name, "arguments": args}
				if key != "" {
					params["_meta"] = map[string]any{"io.cairn/idempotencyKey": key}
				}
				r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
				m := r.next(60*time.Second, fmt.Sprint("the answer to ", id), idIs(id))
				res, _ := m["result"].(map[string]any)
				if res == nil {
					t.Fatalf("%s: %v", name, m)
				}
				return res
			}
			wantConflict := func(res map[string]any, names string) {
				t.Helper()
				e := toolError(res)
				msg, _ := e["message"].(string)
				if e == nil || e["code"] != "ERR_CONFLICT" || !strings.Contains(msg, names) {
					t.Fatalf("%v; want ERR_CONFLICT naming %s", e, names)
				}
			}
			created := call(1, "task_create", map[string]any{"title": "one"}, "meta-key")
			if toolError(created) != nil {
				t.Fatal(created)
			}
			wantConflict(call(2, "task_create", map[string]any{"title": "two"}, "meta-key"), `_meta.io.cairn/idempotencyKey "meta-key"`)
			if toolError(call(3, "task_create", map[string]any{"title": "three"}, "")) != nil {
				t.Fatal("a create without a key failed")
			}
			// id 3 again, with another call: refused, and told to use a new id.
			wantConflict(call(3, "task_create", map[string]any{"title": "four"}, ""), "request id 3 of this session was already used for another call")
			list := call(4, "task_list", map[string]any{"project": "web"}, "")
			sc, _ := list["structuredContent"].(map[string]any)
			if n, _ := sc["total_count"].(float64); n != 2 {
				raw, _ := json.Marshal(sc)
				t.Fatalf("%v tasks; want 2 (one and three): %s", n, raw)
			}
		})
	}
}
