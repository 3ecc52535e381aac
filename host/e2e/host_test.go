package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestToolsListedWithSchemas(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	tools := s.tools()
	for _, name := range []string{"server_ping", "server_health", "testkit_echo", "testkit_sleep", "testkit_big"} {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("tool %s not listed; have %v", name, keys(tools))
		}
		in, _ := json.Marshal(tool.InputSchema)
		if len(tool.RawInputSchema) > 0 {
			in = tool.RawInputSchema
		}
		if !strings.Contains(string(in), `"type":"object"`) {
			t.Errorf("%s input schema is not an object schema: %s", name, in)
		}
		validateAgainst(t, w, tool, map[string]any{"error": map[string]any{"code": "ERR_NOT_FOUND", "message": "m", "details": map[string]any{}}})
		// mcp-go's client keeps $defs of an output schema, not its anyOf.
		if tool.OutputSchema.Type != "object" || tool.OutputSchema.Defs["error"] == nil {
			t.Errorf("%s output schema lacks type object or $defs.error (docs/decisions.md D37): %+v", name, tool.OutputSchema)
		}
	}
	echo := tools["testkit_echo"]
	if echo.Annotations.ReadOnlyHint == nil || !*echo.Annotations.ReadOnlyHint {
		t.Errorf("testkit_echo should be annotated read-only")
	}
	// readOnlyHint false is MCP's default, so it is left out (docs/decisions.md D37).
	if sleep := tools["testkit_sleep"]; sleep.Annotations.ReadOnlyHint != nil && *sleep.Annotations.ReadOnlyHint {
		t.Errorf("testkit_sleep should not be read-only")
	}
	var props map[string]any
	raw, _ := json.Marshal(echo.InputSchema)
	_ = json.Unmarshal(raw, &props)
	if !strings.Contains(string(raw), `"maxLength":100`) {
		t.Errorf("echo schema lost its constraints: %s", raw)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCallSucceedsAsD3Says(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	tools := s.tools()
	res := s.call("testkit_echo", map[string]any{"message": "<hi> & \u2028"})
	if res.IsError {
		t.Fatalf("unexpected error: %+v", res)
	}
	got := structured(t, res)
	if got["message"] != "<hi> & \u2028" {
		t.Errorf("message = %v", got["message"])
	}
	if got["caller"] != "e2e-client" || got["source"] != "client" {
		t.Errorf("caller identity = %v/%v, want the client's name (D4)", got["caller"], got["source"])
	}
	if metaStatus(res) != 200 {
		t.Errorf("_meta.status = %v, want 200", metaStatus(res))
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("first content block is %T, want text", res.Content[0])
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
		t.Fatalf("text block is not JSON: %q", text.Text)
	}
	if fmt.Sprint(fromText) != fmt.Sprint(got) {
		t.Errorf("text block %v differs from structuredContent %v", fromText, got)
	}
	if strings.Contains(text.Text, `\u003c`) {
		t.Errorf("output is HTML-escaped: %s", text.Text)
	}
	validateAgainst(t, w, tools["testkit_echo"], got)

	// 201 from a tool that declares it.
	res = s.call("testkit_sleep", map[string]any{"ms": 1})
	if metaStatus(res) != 201 {
		t.Errorf("sleep status = %v, want 201", metaStatus(res))
	}

	// Host tools.
	res = s.call("server_ping", map[string]any{})
	ping := structured(t, res)
	if ping["ok"] != true {
		t.Errorf("ping: %v", ping)
	}
	ts, _ := ping["timestamp"].(string)
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", ts); err != nil || len(ts) != 24 {
		t.Errorf("ping timestamp %q is not ISO-8601 with milliseconds (D5)", ts)
	}
	validateAgainst(t, w, tools["server_ping"], ping)
	health := structured(t, s.call("server_health", map[string]any{}))
	validateAgainst(t, w, tools["server_health"], health)
	stages := fmt.Sprint(health["middleware"].(map[string]any)["stages"])
	for _, st := range []string{"identify", "authorize", "filter", "audit", "metrics", "dispatch"} {
		if !strings.Contains(stages, st) {
			t.Errorf("health middleware stages %s lack %s", stages, st)
		}
	}
	if health["mode"] != "FULL" || health["status"] != "ok" {
		t.Errorf("health = %v", health)
	}
}

func TestAgentIDOverridesClientName(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve("CAIRN_AGENT_ID=agent-7")
	got := structured(t, s.call("testkit_echo", map[string]any{"message": "x"}))
	if got["caller"] != "agent-7" || got["source"] != "env" {
		t.Errorf("caller = %v/%v, want agent-7/env", got["caller"], got["source"])
	}
}

func TestTypedErrorsFollowD3AndValidate(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	tools := s.tools()
	cases := []struct {
		name       string
		tool       string
		args       map[string]any
		status     float64
		code       string
		field      string
		constraint string
	}{
		{"minLength", "testkit_echo", map[string]any{"message": ""}, 400, "ERR_INVALID_INPUT", "message", "minLength"},
		{"maxLength", "testkit_echo", map[string]any{"message": strings.Repeat("a", 101)}, 400, "ERR_INVALID_INPUT", "message", "maxLength"},
		{"required", "testkit_echo", map[string]any{}, 400, "ERR_INVALID_INPUT", "message", "required"},
		{"type", "testkit_echo", map[string]any{"message": 5}, 400, "ERR_INVALID_INPUT", "message", "type"},
		{"maximum", "testkit_echo", map[string]any{"message": "a", "count": 11}, 400, "ERR_INVALID_INPUT", "count", "maximum"},
		{"unknown argument", "testkit_echo", map[string]any{"message": "a", "colour": "red"}, 400, "ERR_INVALID_INPUT", "colour", "additionalProperties"},
		{"plugin 404", "testkit_fail", map[string]any{"code": "ERR_TASK_NOT_FOUND", "status": 404, "field": "task_id"}, 404, "ERR_TASK_NOT_FOUND", "task_id", "testkit"},
		{"plugin 409", "testkit_fail", map[string]any{"code": "ERR_ALREADY_FINALIZED", "status": 409}, 409, "ERR_ALREADY_FINALIZED", "", ""},
		{"panic", "testkit_panic", map[string]any{}, 500, "ERR_INTERNAL", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.call(c.tool, c.args)
			if !res.IsError {
				t.Fatalf("want an error, got %+v", structured(t, res))
			}
			env := structured(t, res)
			e, ok := env["error"].(map[string]any)
			if !ok {
				t.Fatalf("structuredContent is not the error envelope: %v", env)
			}
			if e["code"] != c.code || metaStatus(res) != c.status {
				t.Errorf("got %v status %v, want %s %v", e["code"], metaStatus(res), c.code, c.status)
			}
			if msg, _ := e["message"].(string); msg == "" {
				t.Errorf("error without a message")
			}
			details, ok := e["details"].(map[string]any)
			if !ok {
				t.Fatalf("details missing: %v", e)
			}
			if c.field != "" && (details["field"] != c.field || details["constraint"] != c.constraint) {
				t.Errorf("details = %v, want field %s constraint %s", details, c.field, c.constraint)
			}
			text := res.Content[0].(mcp.TextContent).Text
			var fromText map[string]any
			if err := json.Unmarshal([]byte(text), &fromText); err != nil || fmt.Sprint(fromText) != fmt.Sprint(env) {
				t.Errorf("text block %q differs from structuredContent", text)
			}
			validateAgainst(t, w, tools[c.tool], env)
		})
	}
	// The plugin survives a panic in a handler.
	if res := s.call("testkit_echo", map[string]any{"message": "still here"}); res.IsError {
		t.Fatalf("call after panic failed: %v", structured(t, res))
	}
}

func TestUnknownToolIsJSONRPCError(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.callCtx(ctx, "no_such_tool", map[string]any{}); err == nil {
		t.Fatal("calling an unknown tool should be a JSON-RPC error")
	}
}

func TestKilledPluginIsRestarted(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	pid := int(structured(t, s.call("testkit_pid", map[string]any{}))["pid"].(float64))
	before := s.notifications("notifications/tools/list_changed")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The very next call succeeds: the host waits for the restart.
	res := s.call("testkit_pid", map[string]any{})
	if res.IsError {
		t.Fatalf("call after kill failed: %v", structured(t, res))
	}
	newPID := int(structured(t, res)["pid"].(float64))
	if newPID == pid {
		t.Fatalf("plugin pid unchanged (%d); it was not restarted", pid)
	}
	eventually(t, patience, "tools/list_changed after restart", func() bool {
		return s.notifications("notifications/tools/list_changed") > before
	})
	tk := pluginHealth(t, s, "testkit")
	if tk["restarts"].(float64) < 1 || tk["state"] != "running" {
		t.Errorf("health after restart: %v", tk)
	}
	if processAlive(pid) {
		t.Errorf("killed plugin %d still alive", pid)
	}
}

func TestKilledHostLeavesNoPlugin(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  testkit:
    path: %s
  other:
    path: %s
    env: {TESTKIT_NAME: other}
`, testkitBin, testkitBin), 0o644)
	s := w.serve()
	var pids []int
	for _, p := range []string{"testkit", "other", "core"} {
		pid, _ := pluginHealth(t, s, p)["pid"].(float64)
		if pid == 0 {
			t.Fatalf("no pid for plugin %s", p)
		}
		pids = append(pids, int(pid))
	}
	hostPID := s.cmd.Process.Pid
	if err := syscall.Kill(hostPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		eventually(t, patience, fmt.Sprintf("plugin %d to exit after its host was killed", pid), func() bool {
			return !processAlive(pid)
		})
	}
	// No process still runs a plugin binary from this workspace.
	eventually(t, patience, "no plugin process of this workspace", func() bool {
		return len(processesUnder(w.root)) == 0
	})
}

// pluginHealth returns one plugin's line of server_health.
func pluginHealth(t *testing.T, s *session, name string) map[string]any {
	t.Helper()
	health := structured(t, s.call("server_health", map[string]any{}))
	for _, p := range health["plugins"].([]any) {
		if m := p.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("plugin %s not in health: %v", name, health["plugins"])
	return nil
}

// processesUnder lists pids whose executable path or arguments mention dir.
func processesUnder(dir string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		if processAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestFailedHandshakeIsReportedNotFatal(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	w.writeFile(".cairn/plugins/cairn-plugin-broken", "#!/bin/sh\necho 'this is not a handshake'\nexit 3\n", 0o755)
	// The operator trusted the broken plugin: it is started, and fails.
	trustEnv, _ := ownTrustStore(t, testkitBin, filepath.Join(w.root, ".cairn", "plugins", "cairn-plugin-broken"))
	s := w.serve(trustEnv)
	if res := s.call("testkit_echo", map[string]any{"message": "ok"}); res.IsError {
		t.Fatalf("healthy plugin unusable: %v", structured(t, res))
	}
	health := structured(t, s.call("server_health", map[string]any{}))
	if health["status"] != "degraded" {
		t.Errorf("status = %v, want degraded", health["status"])
	}
	if !strings.Contains(fmt.Sprint(health["problems"]), "broken") {
		t.Errorf("problems do not name the broken plugin: %v", health["problems"])
	}
	// The log line may reach the session's stderr after the answers.
	stderrSays(t, s.stderr, "the session's stderr (the stray stdout line logged)", "this is not a handshake")
}

func TestDuplicateToolNamesRefusedAtStart(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  alpha:
    path: %s
    env: {TESTKIT_NAME: dup}
  beta:
    path: %s
    env: {TESTKIT_NAME: dup}
`, testkitBin, testkitBin), 0o644)
	code, stdout, stderr := runCairn(t, w, "", nil, "serve")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "ERR_INIT_FAILED") || !strings.Contains(stderr, "duplicate tool name") ||
		!strings.Contains(stderr, "alpha") || !strings.Contains(stderr, "beta") {
		t.Errorf("stderr does not name the duplicate and both plugins:\n%s", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout should be empty, got %q", stdout)
	}
}

func TestCancellationReachesHandler(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.callCtx(ctx, "testkit_sleep", map[string]any{"ms": 60000, "marker": "c1"})
		errc <- err
	}()
	eventually(t, patience, "the plugin handler to start", func() bool {
		_, err := os.Stat(filepath.Join(w.dataDir(), "started-c1"))
		return err == nil
	})
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	marker := filepath.Join(w.dataDir(), "cancelled-c1")
	eventually(t, patience, "the plugin handler to observe cancellation", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
}

func TestProgressIsForwarded(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	req := mcp.CallToolRequest{}
	req.Params.Name = "testkit_sleep"
	req.Params.Arguments = map[string]any{"ms": 300}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.c.CallTool(ctx, req); err != nil {
		t.Fatal(err)
	}
	eventually(t, patience, "progress notifications", func() bool {
		return s.notifications("notifications/progress") >= 5
	})
}

func TestTenMegabyteResult(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	const size = 10 << 20
	res := s.call("testkit_big", map[string]any{"bytes": size})
	if res.IsError {
		t.Fatalf("big result failed: %v", structured(t, res))
	}
	got := structured(t, res)
	if data, _ := got["data"].(string); len(data) != size {
		t.Fatalf("data length %d, want %d", len(data), size)
	}
}

func TestImageContentPassesThrough(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	res := s.call("testkit_image", map[string]any{})
	if len(res.Content) != 2 {
		t.Fatalf("want text + image content, got %d blocks", len(res.Content))
	}
	img, ok := res.Content[1].(mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || img.Data == "" {
		t.Fatalf("second block = %#v", res.Content[1])
	}
}

func TestResourcesPassThrough(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The built-in areas serve resources too; look at the testkit's.
	list, err := s.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "testkit://") {
			mine = append(mine, r.URI)
		}
	}
	if len(mine) != 1 || mine[0] != "testkit://readme" {
		t.Fatalf("testkit resources: %v (all: %+v)", mine, list.Resources)
	}
	tpls, err := s.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tp := range tpls.ResourceTemplates {
		if strings.HasPrefix(tp.URITemplate.Raw(), "testkit://") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("testkit templates: %d in %+v", n, tpls.ResourceTemplates)
	}
	read := func(uri string) (*mcp.ReadResourceResult, error) {
		r := mcp.ReadResourceRequest{}
		r.Params.URI = uri
		return s.c.ReadResource(ctx, r)
	}
	r, err := read("testkit://notes/42")
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Contents[0].(mcp.TextResourceContents); !ok || tc.Text != "note 42" {
		t.Fatalf("read: %#v", r.Contents)
	}
	if _, err := read("testkit://notes/missing"); err == nil {
		t.Fatal("reading a missing resource should fail")
	}
}

func TestEventsCrossPlugins(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  pub:
    path: %s
    env: {TESTKIT_NAME: pub}
  sub:
    path: %s
    env: {TESTKIT_NAME: sub}
`, testkitBin, testkitBin), 0o644)
	s := w.serve()
	if res := s.call("pub_publish", map[string]any{"type": "demo.hello", "data": map[string]any{"n": 1}}); res.IsError {
		t.Fatal(structured(t, res))
	}
	eventually(t, patience, "sub to receive demo.hello", func() bool {
		evs := structured(t, s.call("sub_events", map[string]any{}))["events"].([]any)
		if len(evs) != 1 {
			return false
		}
		ev := evs[0].(map[string]any)
		return ev["type"] == "demo.hello" && ev["source"] == "pub"
	})
	// A plugin does not hear its own events.
	if evs := structured(t, s.call("pub_events", map[string]any{}))["events"].([]any); len(evs) != 0 {
		t.Errorf("publisher received its own event: %v", evs)
	}
}

func TestConcurrentHTTPSessions(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	url, stderr := startHTTP(t, w, nil, "", "--no-auth")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- httpSession(url, fmt.Sprintf("http-client-%d", i))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("%v\nstderr:\n%s", err, stderr.String())
		}
	}
}

func httpSession(url, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return fmt.Errorf("%s initialize: %w", name, err)
	}
	for i := 0; i < 20; i++ {
		call := mcp.CallToolRequest{}
		call.Params.Name = "testkit_echo"
		call.Params.Arguments = map[string]any{"message": fmt.Sprintf("%s-%d", name, i)}
		res, err := c.CallTool(ctx, call)
		if err != nil {
			return fmt.Errorf("%s call %d: %w", name, i, err)
		}
		var got map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if len(res.RawStructuredContent) > 0 {
			b = res.RawStructuredContent
		}
		_ = json.Unmarshal(b, &got)
		if got["message"] != fmt.Sprintf("%s-%d", name, i) || got["caller"] != name {
			return fmt.Errorf("%s call %d: got %v", name, i, got)
		}
	}
	return nil
}

func TestStdoutCarriesOnlyJSONRPC(t *testing.T) {
	w := newWorkspace(t)
	// A third-party plugin gets only the config's env (D23), so the noise
	// switch is set there.
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  testkit:\n    path: %s\n    env:\n      TESTKIT_STDOUT_NOISE: \"1\"\n", testkitBin), 0o644)
	cmd := newCmd(w, "serve")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { _, _ = stdin.Write([]byte(s + "\n")) }
	wait := func(id int) {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed; stderr:\n%s", stderr.String())
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
					t.Fatalf("stdout line is not JSON-RPC: %q", l)
				}
				if v, ok := m["id"].(float64); ok && int(v) == id {
					return
				}
			case <-deadline:
				t.Fatalf("no response %d; stderr:\n%s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	wait(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	wait(2)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"testkit_echo","arguments":{"message":"x"}}}`)
	wait(3)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"server_health","arguments":{}}}`)
	wait(4)
	_ = stdin.Close()
	for l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", l)
		}
	}
	_ = cmd.Wait()
	if !strings.Contains(stderr.String(), "hello from a noisy plugin") {
		t.Errorf("the plugin's stray stdout was not diverted to the log:\n%s", stderr.String())
	}
}

// The host announces host.ready once every plugin is subscribed, and again
// after a plugin restart, so plugins can publish what they held back.
func TestHostReadyEvent(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  watcher:\n    path: %s\n    env: {TESTKIT_NAME: watcher, TESTKIT_SUBSCRIBE: \"host.*\"}\n", testkitBin), 0o644)
	s := w.serve()
	ready := func() int {
		n := 0
		for _, e := range structured(t, s.call("watcher_events", map[string]any{}))["events"].([]any) {
			if m := e.(map[string]any); m["type"] == "host.ready" && m["source"] == "host" {
				n++
			}
		}
		return n
	}
	eventually(t, patience, "host.ready after start", func() bool { return ready() == 1 })
	pid := int(structured(t, s.call("watcher_pid", map[string]any{}))["pid"].(float64))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The restarted watcher starts with an empty log and hears the host
	// announce readiness again.
	eventually(t, patience, "host.ready after the restart", func() bool {
		res := s.call("watcher_pid", map[string]any{})
		if res.IsError || int(structured(t, res)["pid"].(float64)) == pid {
			return false
		}
		return ready() == 1
	})
}

// A plugin whose tool schema uses a keyword cairn's validator does not
// implement is refused when the host registers its tools, naming the
// plugin, the tool, the keyword and where it is, rather than having the
// keyword silently ignored.
func TestUnsupportedSchemaKeywordRefusedAtRegistration(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  odd:
    path: %s
    env: {TESTKIT_NAME: odd, TESTKIT_SCHEMA_KEYWORD: contains}
`, testkitBin), 0o644)
	code, stdout, stderr := runCairn(t, w, "", nil, "serve")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"ERR_INIT_FAILED", "plugin odd", "tool odd_odd_schema", `at #/properties/tags: keyword "contains" is not supported`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("stdout should be empty, got %q", stdout)
	}
}
