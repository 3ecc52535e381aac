package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
)

// The official Go SDK (v1.8.0) implements no part of MCP tasks, in either
// era: its ClientSession has no tasks/* methods and cannot put params.task
// on a call, and it decodes a 2026-07-28 result by its request's type,
// knowing no resultType "task". So these tests speak tasks as JSON-RPC
// over the Go SDK's own stdio transport and message codec (mcp.Connection,
// jsonrpc.Request and Response), and check with its ClientSession what it
// does implement: the capabilities and tools it decodes, and a plain call
// to a task tool.

// tasksMeta is a 2026-07-28 request's _meta declaring the tasks extension.
func tasksMeta() map[string]any {
	m := modernMeta("2026-07-28", "go-sdk-raw", "")
	m["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	return m
}

// sdkConn is one `cairn serve` reached through the Go SDK's stdio
// transport, spoken to request by request.
type sdkConn struct {
	t      *testing.T
	conn   sdkmcp.Connection
	stderr *syncBuffer
	next   int64
}

func dialSDK(t *testing.T, w *workspace, env []string) *sdkConn {
	t.Helper()
	cmd := exec.Command(cairnBin, "serve")
	cmd.Env = append(append([]string{}, w.env...), env...)
	cmd.Dir = w.root
	c := &sdkConn{t: t, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	conn, err := (&sdkmcp.CommandTransport{Command: cmd}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.conn = conn
	t.Cleanup(func() {
		_ = conn.Close()
		if t.Failed() {
			t.Logf("cairn stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// rpc sends one request and reads up to its response, passing over
// notifications; rpcErr is the JSON-RPC error the server answered.
func (c *sdkConn) rpc(method string, params map[string]any) (result map[string]any, rpcErr *sdkjsonrpc.Error) {
	c.t.Helper()
	c.next++
	id, err := sdkjsonrpc.MakeID(float64(c.next))
	if err != nil {
		c.t.Fatal(err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, &sdkjsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	for {
		msg, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("%s: no answer: %v", method, err)
		}
		resp, ok := msg.(*sdkjsonrpc.Response)
		if !ok || resp.ID != id {
			continue
		}
		if resp.Error != nil {
			we, ok := resp.Error.(*sdkjsonrpc.Error)
			if !ok {
				c.t.Fatalf("%s: error %v", method, resp.Error)
			}
			return nil, we
		}
		if err := json.Unmarshal(resp.Result, &result); err != nil {
			c.t.Fatalf("%s: result %s: %v", method, resp.Result, err)
		}
		return result, nil
	}
}

func (c *sdkConn) ok(method string, params map[string]any) map[string]any {
	c.t.Helper()
	res, e := c.rpc(method, params)
	if e != nil {
		c.t.Fatalf("%s %v: error %d %s", method, params, e.Code, e.Message)
	}
	return res
}

// taskEra speaks one revision's task shapes.
type taskEra struct {
	name string
	// start calls tool as a task and returns its id.
	start func(c *sdkConn, tool string, args map[string]any) string
	// get returns the task as tasks/get answers it.
	get func(c *sdkConn, id string) map[string]any
	// cancel cancels the task.
	cancel func(c *sdkConn, id string)
	// result is the ended task's CallToolResult.
	result func(c *sdkConn, id string) map[string]any
	// open readies a new connection (2025-11-25 initializes it).
	open func(c *sdkConn)
}

var era20251125 = taskEra{
	name: "2025-11-25",
	open: func(c *sdkConn) {
		res := c.ok("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "go-sdk-raw", "version": "1"}})
		caps, _ := res["capabilities"].(map[string]any)
		tasks, _ := caps["tasks"].(map[string]any)
		if tasks["list"] == nil || tasks["cancel"] == nil || tasks["requests"].(map[string]any)["tools"].(map[string]any)["call"] == nil {
			c.t.Fatalf("initialize declares tasks %v", caps["tasks"])
		}
		raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		msg, err := sdkjsonrpc.DecodeMessage(raw)
		if err != nil {
			c.t.Fatal(err)
		}
		if err := c.conn.Write(context.Background(), msg); err != nil {
			c.t.Fatal(err)
		}
	},
	start: func(c *sdkConn, tool string, args map[string]any) string {
		res := c.ok("tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 600000}})
		task, _ := res["task"].(map[string]any)
		if task["status"] != "working" || task["ttl"] != float64(600000) || task["pollInterval"] == nil || task["createdAt"] == nil || res["content"] != nil {
			c.t.Fatalf("CreateTaskResult %v", res)
		}
		return task["taskId"].(string)
	},
	get: func(c *sdkConn, id string) map[string]any {
		return c.ok("tasks/get", map[string]any{"taskId": id})
	},
	cancel: func(c *sdkConn, id string) {
		if res := c.ok("tasks/cancel", map[string]any{"taskId": id}); res["status"] != "cancelled" {
			c.t.Fatalf("tasks/cancel answered %v", res)
		}
		if _, e := c.rpc("tasks/cancel", map[string]any{"taskId": id}); e == nil || e.Code != sdkjsonrpc.CodeInvalidParams {
			c.t.Errorf("cancelling a cancelled task answered %v, want -32602", e)
		}
	},
	result: func(c *sdkConn, id string) map[string]any {
		res := c.ok("tasks/result", map[string]any{"taskId": id})
		meta, _ := res["_meta"].(map[string]any)
		if rel, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
			c.t.Errorf("tasks/result _meta %v names no related task %s", meta, id)
		}
		return res
	},
}

var era20260728 = taskEra{
	name: "2026-07-28",
	open: func(c *sdkConn) {
		res := c.ok("server/discover", map[string]any{"_meta": modernMeta("2026-07-28", "go-sdk-raw", "")})
		caps, _ := res["capabilities"].(map[string]any)
		if ext, _ := caps["extensions"].(map[string]any); ext["io.modelcontextprotocol/tasks"] == nil {
			c.t.Fatalf("server/discover declares extensions %v", caps["extensions"])
		}
		// The revision's tools have no execution member.
		for _, raw := range c.ok("tools/list", map[string]any{"_meta": tasksMeta()})["tools"].([]any) {
			if tool := raw.(map[string]any); tool["execution"] != nil {
				c.t.Errorf("2026-07-28 tools/list gives %s an execution member", tool["name"])
			}
		}
	},
	start: func(c *sdkConn, tool string, args map[string]any) string {
		res := c.ok("tools/call", map[string]any{"name": tool, "arguments": args, "_meta": tasksMeta()})
		if res["resultType"] != "task" || res["status"] != "working" || res["ttlMs"] == nil || res["pollIntervalMs"] == nil || res["content"] != nil {
			c.t.Fatalf("CreateTaskResult %v", res)
		}
		return res["taskId"].(string)
	},
	get: func(c *sdkConn, id string) map[string]any {
		res := c.ok("tasks/get", map[string]any{"taskId": id, "_meta": tasksMeta()})
		if res["resultType"] != "complete" {
			c.t.Errorf("tasks/get resultType %v", res["resultType"])
		}
		return res
	},
	cancel: func(c *sdkConn, id string) {
		if res := c.ok("tasks/cancel", map[string]any{"taskId": id, "_meta": tasksMeta()}); res["resultType"] != "complete" || len(res) != 1 {
			c.t.Fatalf("tasks/cancel answered %v, want an empty acknowledgement", res)
		}
	},
	result: func(c *sdkConn, id string) map[string]any {
		res, _ := c.ok("tasks/get", map[string]any{"taskId": id, "_meta": tasksMeta()})["result"].(map[string]any)
		return res
	},
}

// TestTasksComputerUse runs the computer-use loop on Xvfb against the fake
// Messages API as MCP tasks, in both protocol eras, through the shared
// daemon: a task answers at once and reports the loop's progress; one is
// cancelled; one completes; one is working when the daemon is killed, and
// after a new connection (and a new daemon) the completed one's result is
// fetched and the other is reported failed as interrupted.
func TestTasksComputerUse(t *testing.T) {
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	// While looping, the model asks for a screenshot every 200 ms, for
	// ever; once finishing, it says it is done.
	var finishing atomic.Bool
	var turn atomic.Int64
	api.Fallback = func(visiontest.Request) visiontest.Reply {
		if finishing.Load() {
			return visiontest.TextReply("All done.")
		}
		// A model that takes a moment to answer keeps the loop working.
		time.Sleep(200 * time.Millisecond)
		return visiontest.ToolUseReply("", visiontest.ToolUse{ID: fmt.Sprintf("u%d", turn.Add(1)), Input: map[string]any{"action": "screenshot"}})
	}
	for _, era := range []taskEra{era20251125, era20260728} {
		t.Run(era.name, func(t *testing.T) {
			finishing.Store(false)
			w := newWorkspace(t)
			env := append([]string{visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL=" + api.URL,
				"CAIRN_VISION_MODEL=e2e-model", "DISPLAY=" + srv.Display}, sharedEnv...)
			c := dialSDK(t, w, env)
			era.open(c)
			if era.name == "2025-11-25" {
				listed := c.ok("tools/list", map[string]any{})["tools"].([]any)
				support := map[string]any{}
				for _, raw := range listed {
					tool := raw.(map[string]any)
					if ex, ok := tool["execution"].(map[string]any); ok {
						support[tool["name"].(string)] = ex["taskSupport"]
					}
				}
				want := map[string]any{"computer_agent_run": "optional", "vision_batch_analyze": "optional", "vision_compare": "optional"}
				if fmt.Sprint(support) != fmt.Sprint(want) {
					t.Errorf("execution.taskSupport listed %v, want %v", support, want)
				}
			}
			loop := map[string]any{"task": "keep looking at the screen", "maxTurns": 500, "maxScreenshots": 200}

			// A task answers at once; its status message follows the loop
			// as it drives the screen.
			a := era.start(c, "computer_agent_run", loop)
			eventually(t, 30*time.Second, "the loop's progress in the task's status", func() bool {
				g := era.get(c, a)
				return g["status"] == "working" && strings.Contains(fmt.Sprint(g["statusMessage"]), "executed 1 action(s)")
			})
			era.cancel(c, a)
			eventually(t, 30*time.Second, "the cancelled task to show cancelled", func() bool { return era.get(c, a)["status"] == "cancelled" })
			// Cancelling stopped the loop: the model is asked no more (one
			// request may have been in flight).
			asked := len(api.MessageRequests())
			// An absence: a loop still running would ask the model within it.
			time.Sleep(time.Second)
			if now := len(api.MessageRequests()); now > asked+1 {
				t.Errorf("the cancelled loop kept asking the model: %d requests, then %d", asked, now)
			}

			// One completes.
			finishing.Store(true)
			done := era.start(c, "computer_agent_run", map[string]any{"task": "say you are done"})
			eventually(t, 30*time.Second, "the second task to complete", func() bool { return era.get(c, done)["status"] == "completed" })

			// One is working when the daemon dies.
			finishing.Store(false)
			stuck := era.start(c, "computer_agent_run", loop)
			eventually(t, 30*time.Second, "the third task to work", func() bool {
				return strings.HasPrefix(fmt.Sprint(era.get(c, stuck)["statusMessage"]), "turn")
			})
			pid := daemonPID(t, w)
			if pid == 0 {
				t.Fatal("no daemon")
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			eventually(t, patience, "the daemon to die", func() bool { return !processAlive(pid) })
			_ = c.conn.Close()

			c2 := dialSDK(t, w, env)
			era.open(c2)
			res := era.result(c2, done)
			sc, _ := res["structuredContent"].(map[string]any)
			if res["isError"] == true || sc["finalText"] != "All done." || sc["sessionEnded"] != true {
				t.Errorf("the completed task's result after the restart: %v", res)
			}
			g := era.get(c2, stuck)
			if g["status"] != "failed" || !strings.HasPrefix(fmt.Sprint(g["statusMessage"]), "interrupted:") {
				t.Errorf("the task working at the kill: %v, want failed as interrupted", g)
			}
			if np := daemonPID(t, w); np == pid {
				t.Errorf("no fresh daemon: pid %d", np)
			}
			switch era.name {
			case "2025-11-25":
				if r := era.result(c2, a); r["isError"] != true || !strings.Contains(fmt.Sprint(r["structuredContent"]), "ERR_CANCELLED") {
					t.Errorf("the cancelled task's result: %v", r)
				}
				var ids []string
				for _, raw := range c2.ok("tasks/list", map[string]any{})["tasks"].([]any) {
					ids = append(ids, raw.(map[string]any)["taskId"].(string))
				}
				if !slices.Equal(ids, []string{a, done, stuck}) {
					t.Errorf("tasks/list %v, want %v", ids, []string{a, done, stuck})
				}
				if _, e := c2.rpc("tasks/get", map[string]any{"taskId": "vision.00000000000000000000000000000000"}); e == nil || e.Code != sdkjsonrpc.CodeInvalidParams {
					t.Errorf("an unknown task answered %v, want -32602", e)
				}
			case "2026-07-28":
				if e, _ := g["error"].(map[string]any); e["code"] != float64(sdkjsonrpc.CodeInternalError) {
					t.Errorf("the interrupted task's error %v", g["error"])
				}
				if _, e := c2.rpc("tasks/get", map[string]any{"taskId": done, "_meta": modernMeta("2026-07-28", "go-sdk-raw", "")}); e == nil || e.Code != -32021 {
					t.Errorf("tasks/get without the extension answered %v, want -32021", e)
				}
			}
		})
	}
}

// TestTasksGoSDKClient checks what the official Go SDK client makes of a
// server with tasks, in both eras: it connects, lists the task tools, and
// a plain call to one (no task asked for, or in 2026-07-28 the extension
// not declared) is answered as a plain call.
func TestTasksGoSDKClient(t *testing.T) {
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	api.Fallback = func(visiontest.Request) visiontest.Reply { return visiontest.TextReply("Nothing to do.") }
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			w := newWorkspace(t)
			cmd := exec.Command(cairnBin, "serve")
			cmd.Env = append(append([]string{}, w.env...), visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL="+api.URL,
				"CAIRN_VISION_MODEL=e2e-model", "DISPLAY="+srv.Display)
			cmd.Dir = w.root
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "go-sdk", Version: "1.8.0"}, nil)
			cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, &sdkmcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("the Go SDK negotiated %s, want %s", got, version)
			}
			if ext := cs.InitializeResult().Capabilities.Extensions; ext["io.modelcontextprotocol/tasks"] == nil {
				t.Errorf("the Go SDK sees extensions %v", ext)
			}
			listed, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(listed.Tools, func(tl *sdkmcp.Tool) bool { return tl.Name == "computer_agent_run" }) {
				t.Fatal("computer_agent_run is not listed")
			}
			res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "computer_agent_run", Arguments: map[string]any{"task": "nothing"}})
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if res.IsError || sc["finalText"] != "Nothing to do." {
				t.Errorf("a plain call to a task tool: %v", sc)
			}
		})
	}
}

// TestTasksTypeScriptClient drives the computer-use loop as tasks with the
// official TypeScript SDK's experimental tasks client (2025-11-25; the SDK
// speaks no later revision): callToolStream creates, polls and fetches a
// task's result, validated against the tool's output schema; a second is
// cancelled, read and listed. Over stdio and streamable HTTP.
func TestTasksTypeScriptClient(t *testing.T) {
	ts := installTSClient(t)
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	var turn atomic.Int64
	api.Fallback = func(r visiontest.Request) visiontest.Reply {
		if !strings.Contains(fmt.Sprint(r.Body["messages"]), "keep looking") {
			return visiontest.TextReply("All done.")
		}
		// A model that takes a moment to answer keeps the loop working.
		time.Sleep(200 * time.Millisecond)
		return visiontest.ToolUseReply("", visiontest.ToolUse{ID: fmt.Sprintf("u%d", turn.Add(1)), Input: map[string]any{"action": "screenshot"}})
	}
	env := []string{visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL=" + api.URL, "DISPLAY=" + srv.Display}
	check := func(t *testing.T, got map[string]any) {
		caps, _ := got["capabilities"].(map[string]any)
		if caps["list"] == nil || caps["cancel"] == nil {
			t.Errorf("the TypeScript client sees tasks capabilities %v", got["capabilities"])
		}
		if ts, _ := got["taskSupport"].(map[string]any); ts["computer_agent_run"] != "optional" {
			t.Errorf("taskSupport %v", got["taskSupport"])
		}
		stream := anyStrings(got["stream"])
		if len(stream) < 3 || stream[0] != "taskCreated" || stream[1] != "taskStatus" || stream[len(stream)-1] != "result" || got["finalText"] != "All done." {
			t.Errorf("callToolStream yielded %v (final text %v, error %v)", stream, got["finalText"], got["streamError"])
		}
		if got["cancelled"] != "cancelled" || got["got"] != "cancelled" {
			t.Errorf("cancelTask %v, then getTask %v", got["cancelled"], got["got"])
		}
		if listed := anyStrings(got["listed"]); !slices.Equal(listed, []string{"completed", "cancelled"}) {
			t.Errorf("listTasks %v", listed)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		w := newWorkspace(t)
		check(t, ts.run(t, w, env, "ts-tasks.mjs", "stdio", cairnBin, "serve"))
	})
	t.Run("http", func(t *testing.T) {
		w := newWorkspace(t)
		url, _ := startHTTP(t, w, env, "", "--no-auth")
		check(t, ts.run(t, w, nil, "ts-tasks.mjs", "http", url))
	})
}

// postModern posts one 2026-07-28 request declaring the tasks extension,
// with the headers the revision requires (Mcp-Name: name, when given) and
// an API key (when given), and returns the HTTP status and the answer.
func postModern(t *testing.T, url, key, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = tasksMeta()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp.StatusCode, m
}

// TestTasksModernHTTP checks the 2026-07-28 task methods over Streamable
// HTTP as JSON-RPC (no official client speaks them): the headers the
// revision and the extension require, Mcp-Name being the task id, the HTTP
// status of each answer, and a task seen only by the API key's user that
// started it (docs/decisions.md D22).
func TestTasksModernHTTP(t *testing.T) {
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	api.Fallback = func(visiontest.Request) visiontest.Reply { return visiontest.TextReply("All done.") }
	w := newWorkspace(t)
	_, alice := createKey(t, w, "--name", "alice's agent", "--user", "alice")
	_, bob := createKey(t, w, "--name", "bob's agent", "--user", "bob")
	url, _ := startHTTP(t, w, []string{visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL=" + api.URL, "DISPLAY=" + srv.Display}, "")
	post := func(method, name string, params map[string]any) (int, map[string]any) {
		t.Helper()
		return postModern(t, url, alice, method, name, params)
	}
	code, m := post("tools/call", "computer_agent_run", map[string]any{"name": "computer_agent_run", "arguments": map[string]any{"task": "say you are done"}})
	res, _ := m["result"].(map[string]any)
	if code != http.StatusOK || res["resultType"] != "task" {
		t.Fatalf("tools/call: %d %v", code, m)
	}
	id := res["taskId"].(string)
	eventually(t, 30*time.Second, "the task to complete", func() bool {
		code, m := post("tasks/get", id, map[string]any{"taskId": id})
		res, _ := m["result"].(map[string]any)
		inner, _ := res["result"].(map[string]any)
		sc, _ := inner["structuredContent"].(map[string]any)
		return code == http.StatusOK && res["status"] == "completed" && sc["finalText"] == "All done."
	})
	for what, tc := range map[string]struct {
		key, method, name string
		params            map[string]any
		status, code      int
	}{
		"tasks/get without Mcp-Name":    {alice, "tasks/get", "", map[string]any{"taskId": id}, http.StatusBadRequest, -32020},
		"tasks/get naming another task": {alice, "tasks/get", "vision.x", map[string]any{"taskId": id}, http.StatusBadRequest, -32020},
		"an unknown task":               {alice, "tasks/get", "vision.00000000000000000000000000000000", map[string]any{"taskId": "vision.00000000000000000000000000000000"}, http.StatusBadRequest, -32602},
		"tasks/list":                    {alice, "tasks/list", "", map[string]any{}, http.StatusNotFound, -32601},
		"another user's tasks/get":      {bob, "tasks/get", id, map[string]any{"taskId": id}, http.StatusBadRequest, -32602},
		"another user's tasks/cancel":   {bob, "tasks/cancel", id, map[string]any{"taskId": id}, http.StatusBadRequest, -32602},
	} {
		code, m := postModern(t, url, tc.key, tc.method, tc.name, tc.params)
		if e, _ := m["error"].(map[string]any); code != tc.status || e["code"] != float64(tc.code) {
			t.Errorf("%s: %d %v, want %d with %d", what, code, m, tc.status, tc.code)
		}
	}
	if code, m := post("tasks/cancel", id, map[string]any{"taskId": id}); code != http.StatusOK || fmt.Sprint(m["result"]) != "map[resultType:complete]" {
		t.Errorf("cancelling an ended task: %d %v, want an acknowledgement", code, m)
	}
}

// TestTasksKeepTheDaemon: a shared daemon with no session left stays up
// while a task works, so its client finds the result when it comes back,
// and goes idle once no task works.
func TestTasksKeepTheDaemon(t *testing.T) {
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	var turn atomic.Int64
	api.Fallback = func(visiontest.Request) visiontest.Reply {
		// A model that takes a moment to answer keeps the loop working.
		time.Sleep(200 * time.Millisecond)
		return visiontest.ToolUseReply("", visiontest.ToolUse{ID: fmt.Sprintf("u%d", turn.Add(1)), Input: map[string]any{"action": "screenshot"}})
	}
	w := newWorkspace(t)
	env := append([]string{visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL=" + api.URL, "DISPLAY=" + srv.Display}, sharedEnv...)
	c := dialSDK(t, w, env)
	era20251125.open(c)
	id := era20251125.start(c, "computer_agent_run", map[string]any{"task": "keep looking at the screen", "maxTurns": 500, "maxScreenshots": 200})
	pid := daemonPID(t, w)
	_ = c.conn.Close()
	// Past the daemon's idle time (sharedEnv: 3 s) with no session.
	time.Sleep(5 * time.Second)
	if !processAlive(pid) {
		t.Fatal("the daemon went idle under a working task")
	}
	c2 := dialSDK(t, w, env)
	era20251125.open(c2)
	if np := daemonPID(t, w); np != pid {
		t.Fatalf("a new daemon (%d, was %d)", np, pid)
	}
	if g := era20251125.get(c2, id); g["status"] != "working" {
		t.Fatalf("the task after the reconnect: %v", g)
	}
	era20251125.cancel(c2, id)
	_ = c2.conn.Close()
	eventually(t, patience, "the daemon to go idle once no task works", func() bool { return !processAlive(pid) })
}
