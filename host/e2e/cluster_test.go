package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// Several `cairn serve --http` processes on one PostgreSQL database, each
// with its own data dir : events cross servers
// once per subscriber, a 2025-11-25 session survives the server that
// opened it, a 2026-07-28 client may use any server.

// startCluster starts n servers on dsn at the same time, each in a
// workspace of its own with env added, and waits until each listens and
// has joined the cluster.
func startCluster(t *testing.T, n int, dsn string, env []string, args ...string) []*clusterNode {
	t.Helper()
	nodes := make([]*clusterNode, n)
	for i := range nodes {
		nodeEnv := append([]string{"CAIRN_STORE=" + dsn, "CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_PROJECT=cluster"}, env...)
		nodes[i] = newClusterNode(t, newWorkspace(t), nodeEnv, args...)
		nodes[i].launch()
	}
	for _, node := range nodes {
		node.waitListening()
		eventually(t, 30*time.Second, "server joined the cluster", func() bool {
			return strings.Contains(node.log(), "joined the cluster")
		})
	}
	return nodes
}

// sessionCall is one JSON-RPC request in a 2025-11-25 session; it returns
// the status and every message of the answer (SSE or JSON).
func sessionCall(t *testing.T, url, key, session string, body any) (int, []map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	req.Header.Set("Mcp-Session-Id", session)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msgs []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			line = d
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return resp.StatusCode, msgs
}

// toolResult returns the structured content of the answer to id.
func toolResult(msgs []map[string]any, id float64) map[string]any {
	for _, m := range msgs {
		if m["id"] == id {
			res, _ := m["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			return sc
		}
	}
	return nil
}

func callBody(id int, tool string, args map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}}
}

// openClusterSession initializes a 2025-11-25 session as client name.
func openClusterSession(t *testing.T, url, key, name string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
	resp, msg := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, body: body})
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q %v", resp.StatusCode, id, msg)
	}
	if resp, msg := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, session: id, body: initedMsg}); resp.StatusCode != 202 {
		t.Fatalf("notifications/initialized: %d %v", resp.StatusCode, msg)
	}
	return id
}

// sseListener reads a session's GET stream and keeps its messages.
type sseListener struct {
	mu     sync.Mutex
	msgs   []map[string]any
	closed chan struct{}
}

func listenSession(t *testing.T, url, key, session string) *sseListener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	req.Header.Set("Mcp-Session-Id", session)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	l := &sseListener{closed: make(chan struct{})}
	go func() {
		defer close(l.closed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					l.mu.Lock()
					l.msgs = append(l.msgs, m)
					l.mu.Unlock()
				}
			}
		}
	}()
	return l
}

func (l *sseListener) updates(uri string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		p, _ := m["params"].(map[string]any)
		if m["method"] == string(mcp.MethodNotificationResourceUpdated) && p["uri"] == uri {
			n++
		}
	}
	return n
}

// A client subscribed on server 1 hears of a task changed through server 2
// exactly as often as a client subscribed on server 2 itself; a webhook
// subscribed to task events, with three servers' admin plugins running, is
// delivered each event once.
func TestClusterEventsReachEveryServerOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	servers := startCluster(t, 3, dsn, []string{"CAIRN_ENV=development"}, "--no-auth")
	recv := newHookReceiver(t)

	far, near := httpEraClient(t, servers[0].mcpURL(), false), httpEraClient(t, servers[1].mcpURL(), false)
	created, _ := near.call("task_create", map[string]any{"title": "Shared across servers", "project": "cluster"})
	taskID, _ := created["task_id"].(string)
	if taskID == "" {
		t.Fatalf("task_create: %v", created)
	}
	uri := "cairn://tasks/" + taskID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ec := range []*eraClient{far, near} {
		//lint:ignore SA1019 the 2025-11-25 era is under test
		if err := ec.c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	progress := 1
	update := func(int) {
		near.call("task_update", map[string]any{"task_id": taskID, "progress": progress})
		progress++
	}
	// Both standalone streams are open once each client has heard once.
	far.waitForAfter("the first update on server 1", mcp.MethodNotificationResourceUpdated, aboutURI(uri), update)
	near.waitForAfter("the first update on server 2", mcp.MethodNotificationResourceUpdated, aboutURI(uri), update)
	countAbout := func(ec *eraClient, uri string) int {
		ec.mu.Lock()
		defer ec.mu.Unlock()
		n := 0
		for _, note := range ec.notes {
			if note.Method == string(mcp.MethodNotificationResourceUpdated) && aboutURI(uri)(note) {
				n++
			}
		}
		return n
	}
	count := func(ec *eraClient) int { return countAbout(ec, uri) }
	settle := func() (int, int) {
		var f, n int
		// Settled: ten looks, a second in all, find the counts unchanged.
		for stable := 0; stable < 10; {
			time.Sleep(100 * time.Millisecond)
			if f2, n2 := count(far), count(near); f2 == f && n2 == n {
				stable++
			} else {
				f, n, stable = f2, n2, 0
			}
		}
		return f, n
	}
	farBefore, nearBefore := settle()
	const updates = 5
	for range updates {
		update(0)
	}
	eventually(t, patience, "server 1's client to hear every update", func() bool {
		return count(far)-farBefore >= updates && count(near)-nearBefore >= updates
	})
	farAfter, nearAfter := settle()
	if got, want := farAfter-farBefore, nearAfter-nearBefore; got != want || want < updates {
		t.Errorf("server 1's client heard %d updates of %s made through server 2; server 2's own client heard %d (at least %d made)", got, uri, want, updates)
	}
	if st, _ := far.call("server_health", map[string]any{}); st["cluster"] == nil {
		t.Errorf("server_health on a cluster has no cluster line: %v", st)
	} else if c := st["cluster"].(map[string]any); c["connected"] != true || c["events_in"].(float64) < updates {
		t.Errorf("server 1's cluster line: %v", c)
	}

	// A webhook registered through server 1, a task created through server
	// 3, and the admin plugins of all three servers hear task.created:
	// only server 3's queues it.
	first := httpEraClient(t, servers[0].mcpURL(), false)
	reg, _ := first.call("admin_webhook_register", map[string]any{"url": recv.srv.URL + "/hook", "event_types": []string{"task.created"}})
	hook, _ := reg["webhook"].(map[string]any)
	if hook == nil {
		t.Fatalf("admin_webhook_register: %v", reg)
	}
	recv.mu.Lock()
	recv.secret = hook["secret"].(string)
	recv.mu.Unlock()
	third := httpEraClient(t, servers[2].mcpURL(), false)
	made, _ := third.call("task_create", map[string]any{"title": "Announced once", "project": "cluster"})
	madeID, _ := made["task_id"].(string)
	// And an event triggered by hand through server 2 is claimed from the
	// shared queue by one server.
	second := httpEraClient(t, servers[1].mcpURL(), false)
	if out, res := second.call("admin_event_trigger", map[string]any{"event_type": "task.created", "payload": map[string]any{"task_id": "PROBE-1"}}); res.IsError {
		t.Fatalf("admin_event_trigger: %v", out)
	}
	deliveries := func(id string) int {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		n := 0
		for _, ev := range recv.events {
			if ev["type"] == "task.created" && strings.Contains(mustJSON(ev["data"]), `"`+id+`"`) {
				n++
			}
		}
		return n
	}
	for _, id := range []string{madeID, "PROBE-1"} {
		eventually(t, 30*time.Second, "task.created of "+id+" at the webhook receiver", func() bool { return deliveries(id) >= 1 })
	}
	time.Sleep(3 * time.Second) // a second delivery would have come by now
	for _, id := range []string{madeID, "PROBE-1"} {
		if n := deliveries(id); n != 1 {
			t.Errorf("task.created of %s delivered %d times to one webhook; want once", id, n)
		}
	}
	recv.mu.Lock()
	bad := recv.bad
	recv.mu.Unlock()
	if bad != 0 {
		t.Errorf("%d deliveries failed signature checks", bad)
	}

	// An agent on stdio (its own cairn, same database) is in the cluster
	// too: its changes reach the HTTP servers' subscribers.
	agent := newWorkspace(t)
	stdio := agent.serve("CAIRN_STORE="+dsn, "CAIRN_PROJECT=cluster", "CAIRN_ENV=development")
	mine := okCall(t, stdio, "task_create", map[string]any{"title": "From stdio", "project": "cluster"})
	mineURI := "cairn://tasks/" + mine["task_id"].(string)
	//lint:ignore SA1019 the 2025-11-25 era is under test
	if err := far.c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: mineURI}}); err != nil {
		t.Fatal(err)
	}
	// (With the core on bbolt, every server numbers its own tasks: the URI
	// may be one server 1's client heard of before, so count from now.)
	time.Sleep(time.Second) // a quiet second: what was on its way arrives
	before := countAbout(far, mineURI)
	for attempt := 0; countAbout(far, mineURI) == before; attempt++ {
		if attempt == 10 {
			t.Fatalf("server 1's client heard nothing of %s changed through a stdio agent", mineURI)
		}
		okCall(t, stdio, "task_update", map[string]any{"task_id": mine["task_id"], "progress": 10 + attempt})
		poll.Within(time.Second, func() bool { return countAbout(far, mineURI) != before })
	}
}

// A 2025-11-25 session opened on server 1 goes on through server 2 after
// server 1 is SIGKILLed: same id, no new initialize, the client's identity
// (clientInfo, D4), log level and subscriptions kept. DELETE through server
// 3 ends it on every server. A 2026-07-28 client needs no session: each of
// its requests may go to another server.
func TestClusterHTTPSessionSurvivesItsServer(t *testing.T) {
	dsn := pgtest.DSN(t)
	servers := startCluster(t, 3, dsn, nil, "--no-auth")
	a, b, c := servers[0].mcpURL(), servers[1].mcpURL(), servers[2].mcpURL()

	// A task on server 3 to subscribe to.
	status, msgs := sessionCall(t, c, "", openClusterSession(t, c, "", "setup"), callBody(2, "task_create", map[string]any{"title": "Watched", "project": "cluster"}))
	taskID, _ := toolResult(msgs, 2)["task_id"].(string)
	if status != 200 || taskID == "" {
		t.Fatalf("task_create on server 3: %d %v", status, msgs)
	}
	uri := "cairn://tasks/" + taskID

	sid := openClusterSession(t, a, "", "failover-agent")
	for i, body := range []map[string]any{
		{"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": map[string]any{"level": "debug"}},
		{"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": map[string]any{"uri": uri}},
	} {
		if status, msgs := sessionCall(t, a, "", sid, body); status != 200 || msgs[len(msgs)-1]["result"] == nil {
			t.Fatalf("request %d on server 1: %d %v", i, status, msgs)
		}
	}
	status, msgs = sessionCall(t, a, "", sid, callBody(4, "task_create", map[string]any{"title": "Before", "project": "cluster"}))
	if sc := toolResult(msgs, 4); status != 200 || sc["created_by"] != "failover-agent" {
		t.Fatalf("task_create on server 1: %d %v", status, msgs)
	}

	servers[0].stop(syscall.SIGKILL)

	// Server 2 has never seen the session.
	status, msgs = sessionCall(t, b, "", sid, callBody(5, "task_create", map[string]any{"title": "After", "project": "cluster"}))
	sc := toolResult(msgs, 5)
	if status != 200 || sc == nil {
		t.Fatalf("tools/call on server 2 after server 1 died: %d %v", status, msgs)
	}
	if sc["created_by"] != "failover-agent" {
		t.Errorf("created_by on server 2 = %v; want the session's client, failover-agent", sc["created_by"])
	}
	logged := false
	for _, m := range msgs {
		if m["method"] == string(mcp.MethodNotificationMessage) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("server 2 sent no log lines to a session that set its level to debug on server 1: %v", msgs)
	}
	// The subscription made on server 1 now reaches the client on server 2.
	l := listenSession(t, b, "", sid)
	setup := openClusterSession(t, c, "", "setup")
	eventually(t, patience, "resources/updated on server 2 for a change on server 3", func() bool {
		sessionCall(t, c, "", setup, callBody(6, "task_update", map[string]any{"task_id": taskID, "progress": 50}))
		return l.updates(uri) > 0
	})

	// A change made through server 3 reaches server 2's copy: at level
	// error, the debug lines stop.
	if status, msgs := sessionCall(t, c, "", sid, map[string]any{"jsonrpc": "2.0", "id": 8, "method": "logging/setLevel", "params": map[string]any{"level": "error"}}); status != 200 {
		t.Fatalf("logging/setLevel on server 3: %d %v", status, msgs)
	}
	status, msgs = sessionCall(t, b, "", sid, callBody(9, "server_ping", map[string]any{}))
	for _, m := range msgs {
		if status != 200 || m["method"] == string(mcp.MethodNotificationMessage) {
			t.Errorf("server 2 after the level went to error through server 3: %d %v", status, msgs)
			break
		}
	}

	// DELETE through server 3 ends it everywhere.
	if resp, body := rawMCP(t, c, rawReq{method: http.MethodDelete, session: sid}); resp.StatusCode != 200 {
		t.Fatalf("DELETE on server 3: %d %v", resp.StatusCode, body)
	}
	select {
	case <-l.closed:
	case <-time.After(20 * time.Second):
		t.Error("the session's event stream on server 2 stays open after DELETE through server 3")
	}
	for name, url := range map[string]string{"server 2": b, "server 3": c} {
		if status, msgs := sessionCall(t, url, "", sid, callBody(7, "server_ping", map[string]any{})); status != 404 {
			t.Errorf("%s after DELETE: %d %v; want 404", name, status, msgs)
		}
	}

	// 2026-07-28: no session, any server.
	meta := modernMeta(mcp.ProtocolVersion20260728, "stateless-agent", "")
	var workspaceID string
	for i := range 6 {
		url := []string{b, c}[i%2]
		tool, args := "admin_workspace_get", map[string]any{"workspace_id": workspaceID}
		if i == 0 {
			tool, args = "admin_workspace_create", map[string]any{"name": "Stateless"}
		}
		body := modernRequest(10+i, "tools/call", map[string]any{"name": tool, "arguments": args}, meta)
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, "tools/call")
		req.Header.Set(mcp.HeaderName, tool)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
			if json.Unmarshal([]byte(line), &m) == nil && m["id"] != nil {
				break
			}
		}
		res, _ := m["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		if resp.StatusCode != 200 || sc == nil || res["isError"] == true {
			t.Fatalf("2026-07-28 request %d on %s: %d %s", i, url, resp.StatusCode, out)
		}
		if i == 0 {
			workspaceID, _ = sc["id"].(string)
		}
		if sc["owner_id"] != "stateless-agent" || sc["id"] != workspaceID {
			t.Errorf("2026-07-28 request %d on %s: %v; want workspace %s owned by stateless-agent", i, url, sc, workspaceID)
		}
	}
}

// A session belongs to its key on every server: another key naming its id
// on another server gets 404, its own key goes on.
func TestClusterHTTPSessionKeepsItsKey(t *testing.T) {
	dsn := pgtest.DSN(t)
	keys := newWorkspace(t)
	keys.env = append(keys.env, "CAIRN_STORE="+dsn)
	_, alice := createKey(t, keys, "--name", "alice's agent", "--user", "alice")
	_, bob := createKey(t, keys, "--name", "bob's agent", "--user", "bob")
	servers := startCluster(t, 2, dsn, nil)
	sid := openClusterSession(t, servers[0].mcpURL(), alice, "alice-agent")
	if status, msgs := sessionCall(t, servers[1].mcpURL(), bob, sid, callBody(2, "server_ping", map[string]any{})); status != 404 {
		t.Errorf("bob with alice's session on server 2: %d %v; want 404", status, msgs)
	}
	status, msgs := sessionCall(t, servers[1].mcpURL(), alice, sid, callBody(3, "task_create", map[string]any{"title": "Alice's", "project": "cluster"}))
	if sc := toolResult(msgs, 3); status != 200 || sc["created_by"] != "alice" {
		t.Errorf("alice's session on server 2: %d %v", status, msgs)
	}
	if status, msgs := sessionCall(t, servers[0].mcpURL(), bob, sid, callBody(4, "server_ping", map[string]any{})); status != 404 {
		t.Errorf("bob with alice's session on server 1: %d %v; want 404", status, msgs)
	}
}
