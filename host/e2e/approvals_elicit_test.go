package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// gateFixture builds host/e2e/testdata/approvalgate: a plugin whose
// gate_move waits for a person's approval, recorded by its internal
// gate_approve.
func gateFixture(t *testing.T) string {
	t.Helper()
	return buildFixture(t, "cairn-plugin-approvalgate", "github.com/cairn-mcp/cairn/host/e2e/testdata/approvalgate")
}

// gateWorkspace is a workspace with the approval plugin trusted and its
// toolset visible.
func gateWorkspace(t *testing.T, fixture string) *workspace {
	t.Helper()
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, fixture)
	w.env = append(w.env, trustEnv, "CAIRN_TOOLSETS=all")
	w.addPlugin("approvalgate", fixture)
	return w
}

// person answers the approval questions a client is asked, one scripted
// answer per question, and remembers the questions.
type person struct {
	mu sync.Mutex
	// answers are by a text only the question they answer holds; a
	// question none matches is cancelled.
	answers map[string]*mcp.ElicitationResult
	asked   []mcp.ElicitationParams
}

func (p *person) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params)
	for text, a := range p.answers {
		if strings.Contains(req.Params.Message, text) {
			return a, nil
		}
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
}

func (p *person) questions() []mcp.ElicitationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]mcp.ElicitationParams(nil), p.asked...)
}

// gateClient connects to a workspace with the approval plugin on one era
// and transport ("http": to url; else a stdio cairn serve with env, its
// own host or a relay to the shared daemon), declaring elicitation when p
// is not nil.
func gateClient(t *testing.T, w *workspace, url string, modern bool, p *person, env ...string) *eraClient {
	t.Helper()
	opts := eraOptions(modern)
	if p != nil {
		opts = append(opts, client.WithElicitationHandler(p))
	}
	ec := &eraClient{t: t, name: "gate-client", modern: modern, stderr: &syncBuffer{}}
	if url == "" {
		st := transport.NewStdioWithOptions(cairnBin, append(append([]string{}, w.env...), env...), []string{"serve"},
			transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, command, args...)
				cmd.Env, cmd.Dir = env, w.root
				return cmd, nil
			}),
			transport.WithCommandStderrWriter(ec.stderr))
		ec.connect(client.NewClient(st, opts...))
		return ec
	}
	ht, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	ec.connect(client.NewClient(ht, opts...))
	return ec
}

// callGate calls gate_move and returns its result: the structured output,
// or the error envelope's error.
func (ec *eraClient) callGate(id string) (out map[string]any, failed bool) {
	ec.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "gate_move", map[string]any{"id": id}
	res, err := ec.c.CallTool(ctx, req)
	if err != nil {
		ec.t.Fatalf("gate_move %s: %v\n%s", id, err, ec.stderr.String())
	}
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &out)
	if res.IsError {
		e, _ := out["error"].(map[string]any)
		return e, true
	}
	return out, false
}

func accept(content map[string]any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

// A move that waits for a person's approval asks the person through the
// agent's client (docs/decisions.md D45), on both eras, over stdio (its
// own host and the relay) and HTTP: elicitation on 2025-11-25, an input request on 2026-07-28. An
// approval is recorded by the plugin's own internal tool and the move runs
// once more; a rejection is recorded and refused naming the reason; a
// decline leaves the 428. A client that cannot be asked gets the 428
// naming where to approve. The bridge knows no plugin: this one is a test
// fixture.
func TestApprovalAsksThePersonThroughTheClient(t *testing.T) {
	t.Parallel()
	fixture := gateFixture(t)
	for _, modern := range []bool{false, true} {
		era := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		via := map[bool]string{false: "elicitation", true: "input_request"}[modern]
		for _, tr := range []string{"stdio", "relay", "http"} {
			t.Run(era+" "+tr, func(t *testing.T) {
				t.Parallel()
				w := gateWorkspace(t, fixture)
				url, env := "", []string(nil)
				if tr == "relay" {
					env = sharedEnv
				}
				if tr == "http" {
					url, _ = startHTTP(t, w, nil, "cairn.plugin.approvalgate: plugin ready", "--no-auth")
				}
				p := &person{answers: map[string]*mcp.ElicitationResult{
					"gate G-1 ": accept(map[string]any{"decision": "approve"}),
					"gate G-2 ": accept(map[string]any{"decision": "reject", "reason": "the tests are red"}),
					"gate G-3 ": {ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}},
					"gate G-4 ": accept(map[string]any{"decision": "perhaps"}),
				}}
				ec := gateClient(t, w, url, modern, p, env...)

				out, failed := ec.callGate("G-1")
				if failed || out["status"] != "done" || out["decision"] != "approve" || out["via"] != via || out["asked"] != 1.0 {
					t.Fatalf("approved move: %v; want done, approved via %s, asked once", out, via)
				}
				q := p.questions()
				if len(q) != 1 || q[0].Message != "Approve gate G-1 (review → done)?" {
					t.Fatalf("the person was asked %+v; want the plugin's question once", q)
				}
				if schema, _ := json.Marshal(q[0].RequestedSchema); !strings.Contains(string(schema), `"enum":["approve","reject"]`) {
					t.Fatalf("the form %s offers no approve or reject", schema)
				}

				e, failed := ec.callGate("G-2")
				if !failed || e["code"] != "ERR_FORBIDDEN" || !strings.Contains(e["message"].(string), "the tests are red") {
					t.Fatalf("rejected move: %v; want a refusal naming the reason", e)
				}
				got, _ := ec.call("gate_get", map[string]any{"id": "G-2"})
				if got["status"] != "in_progress" || got["decision"] != "reject" || got["reason"] != "the tests are red" || got["via"] != via {
					t.Fatalf("after the rejection the gate is %v", got)
				}

				e, failed = ec.callGate("G-3")
				details, _ := e["details"].(map[string]any)
				if !failed || e["code"] != "ERR_APPROVAL_REQUIRED" || details["asked"] != "declined" {
					t.Fatalf("declined move: %v; want the 428 with asked declined", e)
				}

				e, failed = ec.callGate("G-4")
				details, _ = e["details"].(map[string]any)
				if !failed || e["code"] != "ERR_INVALID_INPUT" || !strings.HasSuffix(details["field"].(string), "content.decision") {
					t.Fatalf("an answer outside the form: %v; want a 400 naming the decision", e)
				}
				if got, _ := ec.call("gate_get", map[string]any{"id": "G-4"}); got["decision"] != nil {
					t.Fatalf("a malformed answer recorded %v", got)
				}

				// A client that declared no elicitation is answered the 428
				// naming where to approve. Over stdio it starts its own
				// cairn, which needs a data dir of its own.
				if tr == "stdio" {
					w = gateWorkspace(t, fixture)
				}
				plain := gateClient(t, w, url, modern, nil, env...)
				e, failed = plain.callGate("G-5")
				details, _ = e["details"].(map[string]any)
				if !failed || e["code"] != "ERR_APPROVAL_REQUIRED" || details["asked"] != nil || !strings.Contains(e["message"].(string), "cairn gate approve G-5") {
					t.Fatalf("a client without elicitation: %v; want the plain 428", e)
				}
			})
		}
	}
}

// With a project's approval on, the agent's move of a task to done asks
// the person at its client (docs/decisions.md D45): approved, the same
// task_update returns the task done and task_get shows the approval via
// the client; rejected with a reason, the agent is refused naming it and
// the task is back in progress. A client that cannot be asked gets the 428.
func TestApprovalOfATaskAsksThePerson(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		era := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		via := map[bool]string{false: "elicitation", true: "input_request"}[modern]
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			env := append(append([]string{}, sharedEnv...), "CAIRN_PROJECT=p")
			cli := func(args ...string) {
				t.Helper()
				if code, out, errOut := runCairn(t, w, "", append(append([]string{}, env...), "USER=tester"), args...); code != 0 {
					t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
				}
			}
			p := &person{answers: map[string]*mcp.ElicitationResult{
				"“ship the importer”":     accept(map[string]any{"decision": "approve"}),
				"“document the importer”": accept(map[string]any{"decision": "reject", "reason": "add the examples"}),
			}}
			ec := gateClient(t, w, "", modern, p, append(append([]string{}, env...), "CAIRN_AGENT_ID=agent-1")...)
			cli("project", "add", "p")
			cli("project", "approval", "p", "on")
			toReview := func(ec *eraClient, title string) string {
				t.Helper()
				created, _ := ec.call("task_create", map[string]any{"title": title, "project": "p"})
				id, _ := created["task_id"].(string)
				ec.call("task_update", map[string]any{"task_id": id, "status": "todo"})
				ec.call("task_update", map[string]any{"task_id": id, "claim": true})
				ec.call("task_update", map[string]any{"task_id": id, "status": "review"})
				return id
			}
			moveDone := func(ec *eraClient, id string) (map[string]any, bool) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "task_update", map[string]any{"task_id": id, "status": "done"}
				res, err := ec.c.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("task_update %s: %v\n%s", id, err, ec.stderr.String())
				}
				raw, _ := json.Marshal(res.StructuredContent)
				var out map[string]any
				_ = json.Unmarshal(raw, &out)
				if res.IsError {
					e, _ := out["error"].(map[string]any)
					return e, true
				}
				return out, false
			}

			first := toReview(ec, "ship the importer")
			if out, failed := moveDone(ec, first); failed || out["status"] != "done" {
				t.Fatalf("approved move of %s: %v; want task_update's output with status done", first, out)
			}
			got, _ := ec.call("task_get", map[string]any{"task_id": first})
			if a, _ := got["approval"].(map[string]any); got["status"] != "done" || a["state"] != "approved" || a["via"] != via {
				t.Fatalf("after the approval task_get shows %v; want done, approved via %s", got, via)
			}
			if q := p.questions(); len(q) != 1 || !strings.Contains(q[0].Message, first) {
				t.Fatalf("the person was asked %+v; want one question about %s", q, first)
			}

			second := toReview(ec, "document the importer")
			e, failed := moveDone(ec, second)
			if msg, _ := e["message"].(string); !failed || !strings.Contains(msg, "add the examples") {
				t.Fatalf("rejected move of %s: %v; want a refusal naming the reason", second, e)
			}
			got, _ = ec.call("task_get", map[string]any{"task_id": second})
			if a, _ := got["approval"].(map[string]any); got["status"] != "in_progress" || a["state"] != "rejected" || a["reason"] != "add the examples" || a["via"] != via {
				t.Fatalf("after the rejection task_get shows %v; want in_progress, rejected with the reason", got)
			}

			plain := gateClient(t, w, "", modern, nil, append(append([]string{}, env...), "CAIRN_AGENT_ID=agent-2")...)
			third := toReview(plain, "tag the release")
			e, failed = moveDone(plain, third)
			if details, _ := e["details"].(map[string]any); !failed || e["code"] != "ERR_APPROVAL_REQUIRED" || details["asked"] != nil {
				t.Fatalf("a client without elicitation: %v; want the plain 428", e)
			}
			if len(p.questions()) != 2 {
				t.Fatalf("the person was asked %d times; want 2", len(p.questions()))
			}
		})
	}
}

// On the wire, a 2026-07-28 call that waits for a person is answered with
// resultType input_required, an elicitation under inputRequests.approval and
// a requestState; a retry whose requestState was altered, or that is taken
// to other arguments, is refused 400 naming requestState and records
// nothing; the retry as issued completes the call.
func TestApprovalInputRequestOnTheWire(t *testing.T) {
	t.Parallel()
	w := gateWorkspace(t, gateFixture(t))
	r := startRaw(t, w)
	meta := modernMeta(mcp.ProtocolVersion20260728, "raw-approver", "")
	meta[mcp.MetaKeyClientCapabilities] = map[string]any{"elicitation": map[string]any{}}
	id := 0
	send := func(name string, args, extra map[string]any) map[string]any {
		t.Helper()
		id++
		params := map[string]any{"name": name, "arguments": args}
		for k, v := range extra {
			params[k] = v
		}
		r.send(modernRequest(id, "tools/call", params, meta))
		msgs := r.until(float64(id), name)
		return msgs[len(msgs)-1]
	}
	call := func(name string, args, extra map[string]any) map[string]any {
		t.Helper()
		msg := send(name, args, extra)
		res, _ := msg["result"].(map[string]any)
		if res == nil {
			t.Fatalf("%s: %v", name, msg)
		}
		return res
	}
	// The plugin may load after the host first answers; ask until it is
	// there.
	if !poll.Within(patience, func() bool {
		res, _ := send("gate_get", map[string]any{"id": "G-9"}, nil)["result"].(map[string]any)
		return res != nil && res["isError"] != true
	}) {
		t.Fatal("the approval plugin never loaded")
	}

	first := call("gate_move", map[string]any{"id": "G-9"}, nil)
	state, _ := first["requestState"].(string)
	ask, _ := first["inputRequests"].(map[string]any)["approval"].(map[string]any)
	if first["resultType"] != "input_required" || state == "" || ask["method"] != "elicitation/create" {
		t.Fatalf("first answer %v; want input_required with an elicitation and a requestState", first)
	}
	approve := map[string]any{"approval": map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}}}
	refused := func(what string, res map[string]any) {
		t.Helper()
		e, _ := res["structuredContent"].(map[string]any)["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		if res["isError"] != true || e["code"] != "ERR_INVALID_INPUT" || details["field"] != "requestState" {
			t.Fatalf("%s: %v; want a 400 naming requestState", what, res)
		}
	}
	// One character of the signed body changed (a middle one: every bit
	// of it counts).
	mid := len(state) / 4
	altered := state[:mid] + map[bool]string{true: "B", false: "A"}[state[mid] == 'A'] + state[mid+1:]
	refused("an altered requestState", call("gate_move", map[string]any{"id": "G-9"}, map[string]any{"requestState": altered, "inputResponses": approve}))
	refused("another call's requestState", call("gate_move", map[string]any{"id": "G-8"}, map[string]any{"requestState": state, "inputResponses": approve}))
	for _, g := range []string{"G-8", "G-9"} {
		if got := call("gate_get", map[string]any{"id": g}, nil)["structuredContent"].(map[string]any); got["decision"] != nil {
			t.Fatalf("a refused retry recorded %v", got)
		}
	}
	done := call("gate_move", map[string]any{"id": "G-9"}, map[string]any{"requestState": state, "inputResponses": approve})
	if got, _ := done["structuredContent"].(map[string]any); got["status"] != "done" || got["via"] != "input_request" {
		t.Fatalf("the retry as issued: %v; want the gate done via input_request", done)
	}
}
