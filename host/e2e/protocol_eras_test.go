package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// eraClient is an mcp-go client on one protocol era (docs/decisions.md D28), with
// the notifications it received.
type eraClient struct {
	t      *testing.T
	c      *client.Client
	name   string
	modern bool
	stderr *syncBuffer
	mu     sync.Mutex
	notes  []mcp.JSONRPCNotification
}

// eraOptions pins the client's protocol: the stateless 2026-07-28 core
// (server/discover, per-request _meta) or 2025-11-25 with initialize.
func eraOptions(modern bool) []client.ClientOption {
	if modern {
		return []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20260728)}
	}
	return []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}
}

// stdioEraClient starts `cairn serve` on stdio (env decides: its own host,
// or a relay to the shared daemon) and connects on one era.
func stdioEraClient(t *testing.T, w *workspace, modern bool, env ...string) *eraClient {
	t.Helper()
	ec := &eraClient{t: t, name: "era-client", modern: modern, stderr: &syncBuffer{}}
	tr := transport.NewStdioWithOptions(cairnBin, append(append([]string{}, w.env...), env...), []string{"serve"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir = env, w.root
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(ec.stderr))
	ec.connect(client.NewClient(tr, eraOptions(modern)...))
	return ec
}

// httpEraClient connects to a `cairn serve --http` on one era.
func httpEraClient(t *testing.T, url string, modern bool) *eraClient {
	t.Helper()
	var opts []transport.StreamableHTTPCOption
	if !modern {
		// 2025-11-25 clients hear the server between requests on a GET
		// stream; 2026-07-28 ones on subscriptions/listen.
		//lint:ignore SA1019 the 2025-11-25 era is under test
		opts = append(opts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ec := &eraClient{t: t, name: "era-http-client", modern: modern, stderr: &syncBuffer{}}
	ec.connect(client.NewClient(tr, eraOptions(modern)...))
	return ec
}

func (ec *eraClient) connect(c *client.Client) {
	t := ec.t
	t.Helper()
	ec.c = c
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The stdio transport's process lives as long as the context Start
	// gets: the test's, not this function's.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v\n%s", err, ec.stderr.String())
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		ec.mu.Lock()
		ec.notes = append(ec.notes, n)
		ec.mu.Unlock()
	})
	t.Cleanup(func() {
		_ = c.Close()
		if t.Failed() {
			t.Logf("cairn stderr:\n%s", ec.stderr.String())
		}
	})
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: ec.name, Version: "1.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, ec.stderr.String())
	}
	if got := mcp.IsModernProtocol(res.ProtocolVersion); got != ec.modern {
		t.Fatalf("negotiated protocol %s; want the modern era: %v", res.ProtocolVersion, ec.modern)
	}
	caps := res.Capabilities
	if caps.Prompts == nil || !caps.Prompts.ListChanged || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil || caps.Logging == nil {
		t.Fatalf("capabilities %+v: want prompts (listChanged), resources (subscribe), completions and logging", caps)
	}
}

// heard reports whether a notification of method satisfying f arrived.
func (ec *eraClient) heard(method string, f func(mcp.JSONRPCNotification) bool) bool {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	for _, n := range ec.notes {
		if n.Method == method && (f == nil || f(n)) {
			return true
		}
	}
	return false
}

func (ec *eraClient) waitFor(what, method string, f func(mcp.JSONRPCNotification) bool) {
	ec.t.Helper()
	eventually(ec.t, patience, what, func() bool { return ec.heard(method, f) })
}

// waitForAfter runs act, then waits for the notification, and runs act
// again (up to five times) while it has not come: over HTTP a notification
// outside any request travels on the client's standalone stream, which the
// client opens on its own schedule, and one sent before it is open is
// not delivered.
func (ec *eraClient) waitForAfter(what, method string, f func(mcp.JSONRPCNotification) bool, act func(attempt int)) {
	ec.t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		act(attempt)
		if poll.Within(10*time.Second, func() bool { return ec.heard(method, f) }) {
			return
		}
	}
	ec.t.Fatalf("timed out waiting for %s", what)
}

func aboutURI(uri string) func(mcp.JSONRPCNotification) bool {
	return func(n mcp.JSONRPCNotification) bool { return n.Params.AdditionalFields["uri"] == uri }
}

func (ec *eraClient) call(name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	ec.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := ec.c.CallTool(ctx, req)
	if err != nil {
		ec.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		ec.t.Fatalf("%s failed: %v", name, res.StructuredContent)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out, res
}

func (ec *eraClient) complete(ref any, arg, value string) []string {
	ec.t.Helper()
	req := mcp.CompleteRequest{}
	req.Params.Ref, req.Params.Argument = ref, mcp.CompleteArgument{Name: arg, Value: value}
	res, err := ec.c.Complete(context.Background(), req)
	if err != nil {
		ec.t.Fatalf("complete %s=%q: %v", arg, value, err)
	}
	return res.Completion.Values
}

func resourceRef(uri string) mcp.ResourceReference {
	return mcp.ResourceReference{Type: "ref/resource", URI: uri}
}

func linkTo(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			return l.URI
		}
	}
	return ""
}

// skillFile is a SKILL.md with prompt arguments in its frontmatter.
const skillFile = `---
version: "1.0.0"
description: "Use when reviewing a change: read it, run it, record the verdict."
capabilities: [review]
arguments:
  - name: change
    description: The change to review
    required: true
---

# Review a change

Read the change, run its tests, and record the verdict with thought_record.
`

// exerciseEra drives every feature of the protocol eras (docs/decisions.md D28) through one
// client: prompts (skills and the sdd workflow, live with the registry),
// completions, resource templates with links, subscriptions notified on
// task update and thought record, the caller's identity (D4) and the
// per-request or per-session log level.
func exerciseEra(t *testing.T, w *workspace, ec *eraClient, project string) {
	ctx := context.Background()
	tasksURI, trailURI := "cairn://tasks/T-1", "cairn://trail/T-1"
	if ec.modern {
		// 2026-07-28: everything is opt-in through subscriptions/listen,
		// and the log level travels in each request's _meta.
		filter := mcp.SubscriptionFilter{PromptsListChanged: true, ToolsListChanged: true, ResourceSubscriptions: []string{tasksURI, trailURI}}
		stop, err := ec.c.ListenAsync(ctx, filter, func(err error) { t.Errorf("subscriptions/listen: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		ec.waitFor("subscriptions acknowledged", mcp.MethodNotificationSubscriptionsAcknowledged, nil)
	}
	// On 2026-07-28 the client then names the level in each request's _meta.
	//lint:ignore SA1019 logging is part of both eras under test
	if err := ec.c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}

	// Prompts: the skills, with their frontmatter arguments, and the sdd
	// workflow taking the phase.
	pl, err := ec.c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	prompts := map[string]mcp.Prompt{}
	for _, p := range pl.Prompts {
		prompts[p.Name] = p
	}
	for _, name := range []string{"cairn-review", "sdd-discuss-phase", "sdd-plan-phase", "sdd-execute-phase", "sdd-verify-phase"} {
		if _, ok := prompts[name]; !ok {
			t.Fatalf("prompt %s not listed; got %v", name, keys(prompts))
		}
	}
	if a := prompts["cairn-review"].Arguments; len(a) != 1 || a[0].Name != "change" || !a[0].Required {
		t.Errorf("cairn-review arguments = %+v; want the frontmatter's required change", a)
	}
	got, err := ec.c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "sdd-plan-phase", Arguments: map[string]string{"phase": "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Messages[0].Content.(mcp.TextContent).Text; !strings.Contains(text, `sdd_plan with phase "2"`) || !strings.Contains(text, "plan-phase") {
		t.Errorf("sdd-plan-phase text = %q; want the call to make and the plan-phase command", text)
	}
	if _, err := ec.c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "sdd-plan-phase"}}); err == nil || !strings.Contains(err.Error(), "phase") {
		t.Errorf("sdd-plan-phase without a phase: %v; want an error naming phase", err)
	}
	got, err = ec.c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "cairn-review", Arguments: map[string]string{"change": "PR 7"}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Messages[0].Content.(mcp.TextContent).Text; !strings.Contains(text, "change: PR 7") || !strings.Contains(text, "record the verdict with thought_record") {
		t.Errorf("cairn-review text = %q; want the argument and the skill's body", text)
	}

	// A task, its resource link, and the caller named by the client (D4).
	out, res := ec.call("task_create", map[string]any{"title": "Fix auth timeout", "project": project})
	if out["task_id"] != "T-1" || out["created_by"] != ec.name {
		t.Fatalf("task_create = %v; want T-1 created by %s", out, ec.name)
	}
	if l := linkTo(res); l != tasksURI {
		t.Errorf("task_create links %q; want %s", l, tasksURI)
	}
	ec.waitFor("a log line about the call at the requested level", string(mcp.MethodNotificationMessage), func(n mcp.JSONRPCNotification) bool {
		s, _ := n.Params.AdditionalFields["data"].(string)
		return strings.Contains(s, "calling task_create as "+ec.name)
	})
	rc, err := ec.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: tasksURI}})
	if err != nil || !strings.Contains(rc.Contents[0].(mcp.TextResourceContents).Text, "Fix auth timeout") {
		t.Fatalf("read %s: %v %v", tasksURI, err, rc)
	}

	// Completions: task ids by prefix and by title word, project slugs,
	// sdd ids and phases.
	if v := ec.complete(resourceRef("cairn://tasks/{task_id}"), "task_id", "T-"); !slices.Contains(v, "T-1") {
		t.Errorf("task_id T- completes to %v", v)
	}
	if v := ec.complete(resourceRef("cairn://trail/{task_id}"), "task_id", "aut"); !slices.Equal(v, []string{"T-1"}) {
		t.Errorf("task_id by title word \"aut\" completes to %v; want [T-1]", v)
	}
	if v := ec.complete(resourceRef("cairn://trail/{task_id}"), "task_id", "zzz"); len(v) != 0 {
		t.Errorf("task_id zzz completes to %v; want nothing", v)
	}
	if v := ec.complete(resourceRef("cairn://projects/{project}"), "project", project[:2]); !slices.Contains(v, project) {
		t.Errorf("project %q completes to %v", project[:2], v)
	}
	if v := ec.complete(resourceRef("sdd://commands/{id}"), "id", "plan"); !slices.Equal(v, []string{"plan-phase"}) {
		t.Errorf("sdd command id plan completes to %v", v)
	}
	if v := ec.complete(resourceRef("sdd://agents/{id}"), "id", "sdd-p"); !slices.Contains(v, "sdd-planner") || slices.Contains(v, "sdd-executor") {
		t.Errorf("sdd agent id sdd-p completes to %v", v)
	}
	if v := ec.complete(mcp.PromptReference{Type: "ref/prompt", Name: "cairn-review"}, "change", ""); len(v) != 0 {
		t.Errorf("a free-text argument completes to %v; want nothing", v)
	}

	// Resource subscriptions: the legacy era subscribes per URI.
	if !ec.modern {
		for _, uri := range []string{tasksURI, trailURI} {
			//lint:ignore SA1019 the 2025-11-25 era is under test
			if err := ec.c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ec.waitForAfter("resources/updated for the task after task_update", mcp.MethodNotificationResourceUpdated, aboutURI(tasksURI), func(attempt int) {
		ec.call("task_update", map[string]any{"task_id": "T-1", "progress": 10 + attempt})
	})
	ec.waitForAfter("resources/updated for the trail after thought_record", mcp.MethodNotificationResourceUpdated, aboutURI(trailURI), func(attempt int) {
		ec.call("thought_record", map[string]any{"task_id": "T-1", "type": "decision", "content": "Retry with backoff."})
	})
	rc, err = ec.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: trailURI}})
	if err != nil || !strings.Contains(rc.Contents[0].(mcp.TextResourceContents).Text, "Retry with backoff.") {
		t.Fatalf("read %s: %v %v", trailURI, err, rc)
	}

	// The proof of a finalized session, linked and completed.
	sess, _ := ec.call("audit_session_start", map[string]any{"task_id": "T-1", "auditor_id": "auditor"})
	sid, _ := sess["session_id"].(string)
	if v := ec.complete(resourceRef("cairn://proofs/{session_id}"), "session_id", "A-"); len(v) != 0 {
		t.Errorf("an open session is offered as a proof: %v", v)
	}
	_, res = ec.call("merkle_finalize", map[string]any{"session_id": sid})
	proofURI := "cairn://proofs/" + sid
	if l := linkTo(res); l != proofURI {
		t.Errorf("merkle_finalize links %q; want %s", l, proofURI)
	}
	if v := ec.complete(resourceRef("cairn://proofs/{session_id}"), "session_id", "A-"); !slices.Equal(v, []string{sid}) {
		t.Errorf("session_id A- completes to %v; want [%s]", v, sid)
	}
	rc, err = ec.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: proofURI}})
	if err != nil {
		t.Fatal(err)
	}
	var bundle map[string]any
	if err := json.Unmarshal([]byte(rc.Contents[0].(mcp.TextResourceContents).Text), &bundle); err != nil || bundle["checkpoint"] == nil {
		t.Errorf("proof %s is not a signed bundle: %v %v", proofURI, err, keys(bundle))
	}

	// Prompts live with the skill registry.
	w.writeFile(".agents/skills/cairn-ship/SKILL.md", strings.Replace(skillFile, "reviewing a change", "shipping a release", 1), 0o644)
	ec.waitFor("prompts/list_changed after a skill was added", mcp.MethodNotificationPromptsListChanged, nil)
	pl, err = ec.c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(pl.Prompts, func(p mcp.Prompt) bool { return p.Name == "cairn-ship" }) {
		t.Errorf("new skill cairn-ship is not a prompt")
	}
}

func eraWorkspace(t *testing.T) *workspace {
	w := newWorkspace(t)
	w.writeFile(".agents/skills/cairn-review/SKILL.md", skillFile, 0o644)
	w.writeFile(".agents/skills/cairn-debug/SKILL.md", "---\nversion: 1\ndescription: Debug a task.\n---\nFind the cause.\n", 0o644)
	return w
}

func TestProtocolErasOverStdio(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modern bool
		env    []string
	}{
		{"2025-11-25 no daemon", false, nil},
		{"2026-07-28 no daemon", true, nil},
		{"2025-11-25 relay", false, sharedEnv},
		{"2026-07-28 relay", true, sharedEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := eraWorkspace(t)
			env := append([]string{"CAIRN_PROJECT=stdio-era"}, tc.env...)
			exerciseEra(t, w, stdioEraClient(t, w, tc.modern, env...), "stdio-era")
		})
	}
}

func TestProtocolErasOverHTTP(t *testing.T) {
	for _, modern := range []bool{false, true} {
		name := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		t.Run(name, func(t *testing.T) {
			w := eraWorkspace(t)
			exerciseEra(t, w, httpEraClient(t, serveHTTPNoAuth(t, w), modern), "http-era")
		})
	}
}

// serveHTTPNoAuth starts `cairn serve --http --no-auth` on a free loopback
// port and returns its MCP URL.
func serveHTTPNoAuth(t *testing.T, w *workspace) string {
	t.Helper()
	url, _ := startHTTP(t, w, []string{"CAIRN_PROJECT=http-era"}, "", "--no-auth")
	return url
}

// A session lists the prompts of the plugins whose tools it sees (D21).
func TestProtocolPromptsFollowToolsets(t *testing.T) {
	for _, tc := range []struct {
		env          string
		want, hidden []string
	}{
		{"CAIRN_TOOLSETS=core", []string{"cairn-review", "resume"}, []string{"sdd-plan-phase"}},
		{"CAIRN_TOOLSETS=sdd", []string{"sdd-plan-phase"}, []string{"cairn-review", "resume"}},
		{"CAIRN_MODE=MINIMAL", nil, []string{"cairn-review", "sdd-plan-phase", "resume"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			w := eraWorkspace(t)
			ec := stdioEraClient(t, w, false, tc.env)
			pl, err := ec.c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range pl.Prompts {
				names = append(names, p.Name)
			}
			for _, n := range tc.want {
				if !slices.Contains(names, n) {
					t.Errorf("%s: prompt %s missing from %v", tc.env, n, names)
				}
			}
			for _, n := range tc.hidden {
				if slices.Contains(names, n) {
					t.Errorf("%s: prompt %s listed: %v", tc.env, n, names)
				}
			}
			if len(tc.hidden) > 0 {
				if _, err := ec.c.GetPrompt(context.Background(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: tc.hidden[0], Arguments: map[string]string{"phase": "1", "change": "x"}}}); err == nil {
					t.Errorf("%s: an unlisted prompt %s was rendered", tc.env, tc.hidden[0])
				}
			}
		})
	}
}
