package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// fakeApprovalHost stands for the host around the bridge: the pipeline
// answers from outs (the last one repeats), the approve tool records its
// calls, the client answers the elicitation with answer.
type fakeApprovalHost struct {
	mu        sync.Mutex
	outs      []*seam.Result
	runs      int
	recorded  []recordedDecision
	recordOut *seam.Result
	answer    *mcp.ElicitationResult
	askErr    error
	asked     []mcp.ElicitationParams
	foreign   bool // the approve tool belongs to another plugin
}

type recordedDecision struct {
	tool   string
	args   map[string]any
	caller seam.Caller
}

func (f *fakeApprovalHost) run(_ context.Context, c *pipeline.Call) *seam.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.Caller.Source == "" {
		// As the pipeline's identify stage does.
		c.Caller.ID, c.Caller.Source = c.Caller.ClientName, "client"
	}
	i := min(f.runs, len(f.outs)-1)
	f.runs++
	return f.outs[i]
}

func (f *fakeApprovalHost) record(_ context.Context, tool string, args json.RawMessage, caller seam.Caller) *seam.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		panic(err)
	}
	f.recorded = append(f.recorded, recordedDecision{tool, m, caller})
	if f.recordOut != nil {
		return f.recordOut
	}
	return &seam.Result{Output: json.RawMessage(`{"recorded":true}`), Status: 200}
}

func (f *fakeApprovalHost) elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	f.mu.Lock()
	f.asked = append(f.asked, r.Params)
	answer, err := f.answer, f.askErr
	f.mu.Unlock()
	if err != nil {
		<-ctx.Done() // the client never answers; the call's end ends the wait
		return nil, err
	}
	return answer, nil
}

func (f *fakeApprovalHost) approves(*pipeline.Call, string) bool { return !f.foreign }

// approvalRequired is a plugin's 428 as the core area answers a move to
// done that waits for a person.
func approvalRequired(askClient bool, mode string) *seam.Result {
	e := errs.New(428, errs.ApprovalRequired, "T-5 waits for a person's approval: approve it in the dashboard's Approvals page (cairn ui --allow-actions) or with `cairn task approve T-5`")
	e.Details = map[string]any{
		"task_id": "T-5", "project": "p", "mode": mode, "ask_client": askClient,
		"question": "Approve T-5 “Ship it” (review → done), asked by agent-1?",
		"approve":  map[string]any{"tool": "task_approve", "args": map[string]any{"task_id": "T-5"}},
		"where":    "the dashboard's Approvals page (cairn ui --allow-actions) or `cairn task approve T-5`",
	}
	return pipeline.Fail(e)
}

var movedDone = &seam.Result{Output: json.RawMessage(`{"id":"T-5","status":"done"}`), Status: 200}

func accepted(content any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

// legacyCtx is a 2025-11-25 call's context whose client declared caps.
func legacyCtx(t *testing.T, caps mcp.ClientCapabilities) context.Context {
	return server.NewMCPServer("t", "1").WithContext(t.Context(), &askedSession{caps: caps})
}

// modernCtx is a 2026-07-28 request's context whose client declared caps.
func modernCtx(t *testing.T, caps *mcp.ClientCapabilities) context.Context {
	return server.WithRequestProtocolInfo(t.Context(), &server.RequestProtocolInfo{Modern: true, ProtocolVersion: "2026-07-28", ClientCapabilities: caps})
}

var elicitCaps = mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}

func taskCall() *pipeline.Call {
	return &pipeline.Call{
		Name: "task_update", Tool: &registry.Tool{Name: "task_update", Owner: "core"},
		Args:   json.RawMessage(`{"id":"T-5","status":"done"}`),
		Caller: seam.Caller{ID: "agent-1", Source: "env", ClientSessionID: "s1"},
	}
}

func errCode(out *seam.Result) string {
	if out.Err == nil {
		return ""
	}
	return out.Err.Code
}

// On 2025-11-25 the bridge elicits the person's decision on the call's
// stream and acts on it: an approval is recorded and the call runs once
// more; a rejection is recorded and refused naming the reason; a decline or
// a cancel returns the 428 saying so. Nothing else is ever asked.
func TestApprovalBridgeElicits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		caps      mcp.ClientCapabilities
		outs      []*seam.Result
		foreign   bool
		answer    *mcp.ElicitationResult
		wantAsked bool
		wantCode  string // "" for success
		wantRuns  int
		wantRec   map[string]any // the approve tool's arguments; nil: not called
		wantText  string         // in the error's message or details
	}{
		{name: "approve re-runs the call", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on"), movedDone},
			answer: accepted(map[string]any{"decision": "approve"}), wantAsked: true, wantRuns: 2,
			wantRec: map[string]any{"task_id": "T-5", "decision": "approve", "via": "elicitation", "complete_move": false}},
		{name: "reject names the reason", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"decision": "reject", "reason": "tests are red"}), wantAsked: true, wantRuns: 1,
			wantCode: errs.Forbidden, wantText: "tests are red",
			wantRec: map[string]any{"task_id": "T-5", "decision": "reject", "via": "elicitation", "complete_move": false, "reason": "tests are red"}},
		{name: "decline returns the 428", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer:    &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}},
			wantAsked: true, wantRuns: 1, wantCode: errs.ApprovalRequired, wantText: "declined"},
		{name: "cancel returns the 428", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer:    &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}},
			wantAsked: true, wantRuns: 1, wantCode: errs.ApprovalRequired, wantText: "cancelled"},
		{name: "approved but still waiting: no second question", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"decision": "approve"}), wantAsked: true, wantRuns: 2, wantCode: errs.ApprovalRequired,
			wantRec: map[string]any{"task_id": "T-5", "decision": "approve", "via": "elicitation", "complete_move": false}},
		{name: "a decision outside the enum", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"decision": "maybe"}), wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "elicitation.content.decision"},
		{name: "no decision", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"reason": "x"}), wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "elicitation.content.decision"},
		{name: "content not an object", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted("approve"), wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "elicitation.content"},
		{name: "a field the form has not", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"decision": "approve", "approver": "root"}), wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "approver"},
		{name: "a reason that is no string", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer: accepted(map[string]any{"decision": "reject", "reason": 7}), wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "reason"},
		{name: "an unknown action", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			answer:    &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: "approve"}},
			wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput, wantText: "action"},
		{name: "no answer", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "on")},
			wantAsked: true, wantRuns: 1, wantCode: errs.InvalidInput},
		{name: "other outcomes pass", caps: elicitCaps, outs: []*seam.Result{movedDone}, wantRuns: 1},
		{name: "other errors pass", caps: elicitCaps, outs: []*seam.Result{pipeline.Fail(errs.New(409, errs.InvalidTransition, "no"))}, wantRuns: 1, wantCode: errs.InvalidTransition},
		{name: "ask_client false", caps: elicitCaps, outs: []*seam.Result{approvalRequired(false, "on")}, wantRuns: 1, wantCode: errs.ApprovalRequired},
		{name: "strict", caps: elicitCaps, outs: []*seam.Result{approvalRequired(true, "strict")}, wantRuns: 1, wantCode: errs.ApprovalRequired},
		{name: "another plugin's approve tool", caps: elicitCaps, foreign: true, outs: []*seam.Result{approvalRequired(true, "on")}, wantRuns: 1, wantCode: errs.ApprovalRequired},
		{name: "a client without elicitation", caps: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, outs: []*seam.Result{approvalRequired(true, "on")}, wantRuns: 1, wantCode: errs.ApprovalRequired},
		{name: "a client with URL elicitation only", caps: mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}, outs: []*seam.Result{approvalRequired(true, "on")}, wantRuns: 1, wantCode: errs.ApprovalRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := &fakeApprovalHost{outs: tc.outs, answer: tc.answer, foreign: tc.foreign}
			b := approvalBridge{host: host, signer: newApprovalSigner()}
			var turn approvalTurn
			out := b.runCall(legacyCtx(t, tc.caps), mcp.CallToolRequest{}, taskCall(), &turn)
			if turn.input != nil {
				t.Fatal("a 2025-11-25 call was answered with an input request")
			}
			if got := errCode(out); got != tc.wantCode {
				t.Fatalf("outcome %+v %s; want code %q", out.Err, out.Output, tc.wantCode)
			}
			if tc.wantCode == "" && string(out.Output) != string(tc.outs[len(tc.outs)-1].Output) {
				t.Fatalf("output %s; want the call's own", out.Output)
			}
			if tc.wantText != "" {
				if b, _ := json.Marshal(out.Err); !strings.Contains(string(b), tc.wantText) {
					t.Fatalf("error %s; want it to name %q", b, tc.wantText)
				}
			}
			if host.runs != tc.wantRuns {
				t.Fatalf("the call ran %d times; want %d", host.runs, tc.wantRuns)
			}
			if (len(host.asked) == 1) != tc.wantAsked || len(host.asked) > 1 {
				t.Fatalf("asked %d times; want asked %v, once at most", len(host.asked), tc.wantAsked)
			}
			if tc.wantAsked {
				p := host.asked[0]
				schema, _ := json.Marshal(p.RequestedSchema)
				if !strings.HasPrefix(p.Message, "Approve T-5") || !strings.Contains(string(schema), `"enum":["approve","reject"]`) ||
					!strings.Contains(string(schema), `"required":["decision"]`) || !strings.Contains(string(schema), `"title":"Reject"`) {
					t.Fatalf("asked %q with %s", p.Message, schema)
				}
			}
			switch {
			case tc.wantRec == nil && len(host.recorded) > 0:
				t.Fatalf("recorded %+v; want nothing recorded", host.recorded)
			case tc.wantRec != nil:
				if len(host.recorded) != 1 {
					t.Fatalf("recorded %+v; want one decision", host.recorded)
				}
				r := host.recorded[0]
				got, _ := json.Marshal(r.args)
				want, _ := json.Marshal(tc.wantRec)
				if r.tool != "task_approve" || string(got) != string(want) || r.caller.ID != "agent-1" {
					t.Fatalf("recorded %s %s as %+v; want task_approve %s as agent-1", r.tool, got, r.caller, want)
				}
			}
		})
	}
}

// The approve tool's refusal (a person's identity rule, a task that moved
// on) is what the client sees, and the call does not run again.
func TestApprovalBridgeRecordRefused(t *testing.T) {
	t.Parallel()
	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on"), movedDone},
		answer: accepted(map[string]any{"decision": "approve"}), recordOut: pipeline.Fail(errs.New(403, errs.Forbidden, "an agent cannot approve its own move"))}
	b := approvalBridge{host: host, signer: newApprovalSigner()}
	out := b.runCall(legacyCtx(t, elicitCaps), mcp.CallToolRequest{}, taskCall(), &approvalTurn{})
	if errCode(out) != errs.Forbidden || host.runs != 1 {
		t.Fatalf("outcome %+v after %d runs; want the approve tool's 403 and no re-run", out.Err, host.runs)
	}
}

// When the call ends while the person has not answered, the wait ends
// with it and nothing is recorded.
func TestApprovalBridgeCancelEndsTheWait(t *testing.T) {
	t.Parallel()
	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on")}, askErr: context.Canceled}
	b := approvalBridge{host: host, signer: newApprovalSigner()}
	ctx, cancel := context.WithCancel(legacyCtx(t, elicitCaps))
	done := make(chan *seam.Result, 1)
	go func() { done <- b.runCall(ctx, mcp.CallToolRequest{}, taskCall(), &approvalTurn{}) }()
	cancel()
	select {
	case out := <-done:
		if errCode(out) != errs.Cancelled || len(host.recorded) != 0 {
			t.Fatalf("outcome %+v, recorded %+v; want ERR_CANCELLED and nothing recorded", out.Err, host.recorded)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call still waits for the person")
	}
}

// A failing client (it errs without the call ending) leaves the 428, saying
// the ask failed.
func TestApprovalBridgeAskFails(t *testing.T) {
	t.Parallel()
	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on")}}
	b := approvalBridge{host: failingElicit{host}, signer: newApprovalSigner()}
	out := b.runCall(legacyCtx(t, elicitCaps), mcp.CallToolRequest{}, taskCall(), &approvalTurn{})
	if errCode(out) != errs.ApprovalRequired || out.Err.Details["asked"] != "failed" || out.Err.Status != 428 {
		t.Fatalf("outcome %+v; want the 428 with asked failed", out.Err)
	}
}

type failingElicit struct{ *fakeApprovalHost }

func (failingElicit) elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return nil, errors.New("client went away")
}

// inputResponses decodes a retry's answers as mcp-go does off the wire.
func inputResponses(t *testing.T, raw string) mcp.InputResponses {
	t.Helper()
	var r mcp.InputResponses
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func retryOf(state string, responses mcp.InputResponses) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.RequestState, req.Params.InputResponses = state, responses
	return req
}

// On 2026-07-28 the bridge answers the call with an input request whose
// requestState it signed; the client's retry carrying the person's answer
// is settled as on 2025-11-25, via input_request.
func TestApprovalBridgeInputRequest(t *testing.T) {
	t.Parallel()
	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on")}}
	b := approvalBridge{host: host, signer: newApprovalSigner()}
	ctx := modernCtx(t, &elicitCaps)
	var turn approvalTurn
	out := b.runCall(ctx, mcp.CallToolRequest{}, taskCall(), &turn)
	if turn.input == nil || errCode(out) != errs.ApprovalRequired {
		t.Fatalf("first call: input %v, outcome %+v; want an input request", turn.input, out.Err)
	}
	in := turn.input
	req, ok := in.InputRequests[approvalInputKey]
	if !in.NeedsInput() || !ok || req.Method != mcp.MethodElicitationCreate || !strings.HasPrefix(req.Elicitation.Message, "Approve T-5") || in.RequestState == "" {
		t.Fatalf("input request %+v", in)
	}
	if len(host.asked) != 0 || len(host.recorded) != 0 {
		t.Fatal("a 2026-07-28 client was sent a server request, or something was recorded")
	}

	host.outs = []*seam.Result{movedDone}
	host.runs = 0
	var again approvalTurn
	out = b.runCall(ctx, retryOf(in.RequestState, inputResponses(t, `{"approval":{"action":"accept","content":{"decision":"approve","reason":"looks good"}}}`)), taskCall(), &again)
	if errCode(out) != "" || string(out.Output) != string(movedDone.Output) || again.input != nil || host.runs != 1 {
		t.Fatalf("retry: %+v %s after %d runs; want the call's output after one run", out.Err, out.Output, host.runs)
	}
	if len(host.recorded) != 1 || host.recorded[0].args["via"] != "input_request" || host.recorded[0].args["decision"] != "approve" ||
		host.recorded[0].args["task_id"] != "T-5" || host.recorded[0].args["reason"] != "looks good" {
		t.Fatalf("recorded %+v", host.recorded)
	}

	// A decline on the retry returns the call's 428, saying so.
	host.outs, host.recorded = []*seam.Result{approvalRequired(true, "on")}, nil
	out = b.runCall(ctx, retryOf(in.RequestState, inputResponses(t, `{"approval":{"action":"decline"}}`)), taskCall(), &approvalTurn{})
	if errCode(out) != errs.ApprovalRequired || out.Err.Details["asked"] != "declined" || len(host.recorded) != 0 {
		t.Fatalf("declined retry: %+v, recorded %+v", out.Err, host.recorded)
	}

	// A 2026-07-28 client without elicitation gets the 428.
	var none approvalTurn
	out = b.runCall(modernCtx(t, &mcp.ClientCapabilities{}), mcp.CallToolRequest{}, taskCall(), &none)
	if none.input != nil || errCode(out) != errs.ApprovalRequired {
		t.Fatalf("no elicitation: input %v, outcome %+v; want the 428", none.input, out.Err)
	}
}

// A retry's requestState must be one this process signed, unaltered,
// unexpired, for the same session, caller, tool and arguments; and the
// answer must be there and well formed. Otherwise a 400 naming the field,
// nothing recorded, nothing run.
func TestApprovalBridgeRefusesBadRetries(t *testing.T) {
	t.Parallel()
	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on")}}
	signer := newApprovalSigner()
	clock := time.Now()
	signer.now = func() time.Time { return clock }
	b := approvalBridge{host: host, signer: signer}
	ctx := modernCtx(t, &elicitCaps)
	var turn approvalTurn
	b.runCall(ctx, mcp.CallToolRequest{}, taskCall(), &turn)
	if turn.input == nil {
		t.Fatal("no input request")
	}
	state := turn.input.RequestState
	approve := `{"approval":{"action":"accept","content":{"decision":"approve"}}}`
	body, tag, _ := strings.Cut(state, ".")
	other := newApprovalSigner()
	forged, err := other.sign(bindingOf(taskCall()), taskCall().Caller, approvalAsk{Tool: "task_approve", Args: json.RawMessage(`{"task_id":"T-5"}`)})
	if err != nil {
		t.Fatal(err)
	}
	altered := func() string {
		raw, _ := json.Marshal(approvalState{Session: "s1", Caller: "env:agent-1", Tool: "task_update", ArgsDigest: argsDigest(taskCall().Args),
			ApproveTool: "task_approve", ApproveArgs: json.RawMessage(`{"task_id":"T-9"}`), Expires: clock.Add(time.Hour).Unix()})
		return base64.RawURLEncoding.EncodeToString(raw) + "." + tag
	}()
	for _, tc := range []struct {
		name       string
		state      string
		responses  string
		call       func(*pipeline.Call)
		later      time.Duration
		wantField  string
		wantReason string
	}{
		{name: "forged under another key", state: forged, responses: approve, wantField: "requestState"},
		{name: "altered body", state: altered, responses: approve, wantField: "requestState"},
		{name: "altered tag", state: body + "." + map[bool]string{true: "B", false: "A"}[tag[0] == 'A'] + tag[1:], responses: approve, wantField: "requestState"},
		{name: "not a token", state: "hello", responses: approve, wantField: "requestState"},
		{name: "expired", state: state, responses: approve, later: approvalStateTTL + time.Second, wantField: "requestState", wantReason: "expired"},
		{name: "another session", state: state, responses: approve, call: func(c *pipeline.Call) { c.Caller.ClientSessionID = "s2" }, wantField: "requestState", wantReason: "sameCall"},
		{name: "another caller", state: state, responses: approve, call: func(c *pipeline.Call) { c.Caller.ID = "agent-2" }, wantField: "requestState", wantReason: "sameCall"},
		{name: "other arguments", state: state, responses: approve, call: func(c *pipeline.Call) { c.Args = json.RawMessage(`{"id":"T-6","status":"done"}`) }, wantField: "requestState", wantReason: "sameCall"},
		{name: "another tool", state: state, responses: approve, call: func(c *pipeline.Call) { c.Name = "task_delete" }, wantField: "requestState", wantReason: "sameCall"},
		{name: "answers without state", responses: approve, wantField: "requestState", wantReason: "required"},
		{name: "state without the answer", state: state, responses: `{"other":{"action":"accept"}}`, wantField: "inputResponses.approval", wantReason: "required"},
		{name: "an answer that is no elicitation result", state: state, responses: `{"approval":[1]}`, wantField: "inputResponses.approval"},
		{name: "a decision outside the enum", state: state, responses: `{"approval":{"action":"accept","content":{"decision":"yes"}}}`, wantField: "inputResponses.approval.content.decision", wantReason: "enum"},
		{name: "content not an object", state: state, responses: `{"approval":{"action":"accept","content":"approve"}}`, wantField: "inputResponses.approval.content", wantReason: "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := &fakeApprovalHost{outs: []*seam.Result{movedDone}}
			s := &approvalSigner{key: signer.key, now: func() time.Time { return clock.Add(tc.later) }}
			b := approvalBridge{host: host, signer: s}
			call := taskCall()
			if tc.call != nil {
				tc.call(call)
			}
			var responses mcp.InputResponses
			if tc.responses != "" {
				responses = inputResponses(t, tc.responses)
			}
			out := b.runCall(ctx, retryOf(tc.state, responses), call, &approvalTurn{})
			if out.Err == nil || out.Err.Status != 400 || out.Err.Details["field"] != tc.wantField ||
				(tc.wantReason != "" && out.Err.Details["constraint"] != tc.wantReason) {
				t.Fatalf("outcome %+v; want a 400 naming %s (%s)", out.Err, tc.wantField, tc.wantReason)
			}
			if len(host.recorded) != 0 || host.runs != 0 {
				t.Fatalf("recorded %+v, ran %d times; want nothing", host.recorded, host.runs)
			}
		})
	}
	// Equal arguments spaced and ordered otherwise are the same call.
	spaced := taskCall()
	spaced.Args = json.RawMessage(`{ "status": "done", "id": "T-5" }`)
	host.outs, host.runs = []*seam.Result{movedDone}, 0
	out := b.runCall(ctx, retryOf(state, inputResponses(t, approve)), spaced, &approvalTurn{})
	if out.Err != nil || host.runs != 1 {
		t.Fatalf("the same arguments respaced: %+v after %d runs", out.Err, host.runs)
	}
}

// The pipeline identifies a caller the transport did not name; the
// requestState binds the call as it came (as its retry comes), and the
// decision is recorded as the caller the pipeline found, on either era.
func TestApprovalBridgeRecordsTheIdentifiedCaller(t *testing.T) {
	t.Parallel()
	unnamed := func() *pipeline.Call {
		c := taskCall()
		c.Caller = seam.Caller{ClientName: "gate-client", ClientSessionID: "s1"}
		return c
	}
	approve := accepted(map[string]any{"decision": "approve"})

	host := &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on"), movedDone}, answer: approve}
	b := approvalBridge{host: host, signer: newApprovalSigner()}
	if out := b.runCall(legacyCtx(t, elicitCaps), mcp.CallToolRequest{}, unnamed(), &approvalTurn{}); out.Err != nil {
		t.Fatalf("2025-11-25: %+v", out.Err)
	}
	if r := host.recorded; len(r) != 1 || r[0].caller.ID != "gate-client" || r[0].caller.Source != "client" {
		t.Fatalf("2025-11-25 recorded %+v; want it as the identified caller", r)
	}

	host = &fakeApprovalHost{outs: []*seam.Result{approvalRequired(true, "on")}}
	b = approvalBridge{host: host, signer: newApprovalSigner()}
	ctx := modernCtx(t, &elicitCaps)
	var turn approvalTurn
	b.runCall(ctx, mcp.CallToolRequest{}, unnamed(), &turn)
	if turn.input == nil {
		t.Fatal("no input request")
	}
	host.outs = []*seam.Result{movedDone}
	out := b.runCall(ctx, retryOf(turn.input.RequestState, inputResponses(t, `{"approval":{"action":"accept","content":{"decision":"approve"}}}`)), unnamed(), &approvalTurn{})
	if out.Err != nil {
		t.Fatalf("2026-07-28 retry: %+v", out.Err)
	}
	if r := host.recorded; len(r) != 1 || r[0].caller.ID != "gate-client" || r[0].caller.Source != "client" || r[0].caller.ClientSessionID != "s1" {
		t.Fatalf("2026-07-28 recorded %+v; want it as the identified caller", r)
	}
}
