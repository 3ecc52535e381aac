package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The approval bridge (docs/decisions.md D45): when a tool call is answered
// 428 ApprovalRequired and the plugin lets the client be asked, the host
// asks the person at the agent's client instead of handing the agent a
// refusal. On 2025-11-25 it sends elicitation/create on the call's own
// stream and waits; on 2026-07-28 it answers with an input request and
// takes the answer on the client's retry. Either way the person's decision
// is recorded by the plugin's internal approve tool, and on approval the
// call runs once more: one question, one re-run, never a loop.

// approvalHost is what the bridge reaches of the host; the Server is one
// (hostApprovals), the package's tests use fakes.
type approvalHost interface {
	// run runs a call through the pipeline, as the client's call ran.
	run(ctx context.Context, c *pipeline.Call) *seam.Result
	// record runs the plugin's internal approve tool as caller.
	record(ctx context.Context, tool string, args json.RawMessage, caller seam.Caller) *seam.Result
	// elicit asks the call's client (2025-11-25) and waits for its answer.
	elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	// approves reports whether tool is an internal tool of the plugin that
	// owns c's tool: a plugin's 428 never makes the host call another
	// plugin's tools.
	approves(c *pipeline.Call, tool string) bool
}

// approvalBridge asks a person about a call's 428 ApprovalRequired.
type approvalBridge struct {
	host   approvalHost
	signer *approvalSigner
}

// approvalTurn carries, out of one tool call, the InputRequiredResult that
// asks a 2026-07-28 client's person; nil while there is nothing to ask.
type approvalTurn struct {
	input *mcp.CallToolResult
}

// askWay is how a call's client can be asked.
type askWay int

const (
	askNone askWay = iota
	// askElicit: a 2025-11-25 session that declared form elicitation, on a
	// transport that carries server-to-client requests.
	askElicit
	// askInputRequest: a 2026-07-28 request that declared form elicitation.
	askInputRequest
)

// approvalAskWay is how the client of the call in ctx can be asked.
func approvalAskWay(ctx context.Context) askWay {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil && formElicitation(info.ClientCapabilities.Elicitation) {
			return askInputRequest
		}
		return askNone
	}
	sess := server.ClientSessionFromContext(ctx)
	ci, ok := sess.(server.SessionWithClientInfo)
	if !ok {
		return askNone
	}
	if _, carries := sess.(server.SessionWithElicitation); !carries {
		return askNone
	}
	if formElicitation(ci.GetClientCapabilities().Elicitation) {
		return askElicit
	}
	return askNone
}

// formElicitation reports whether c offers form elicitation: declared
// with form, or empty (before modes existed, every elicitation was a form).
func formElicitation(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// retriedWithAnswers reports whether req is a client's retry carrying the
// answers to an input request.
func retriedWithAnswers(req mcp.CallToolRequest) bool {
	return req.Params.RequestState != "" || len(req.Params.InputResponses) > 0
}

// runCall runs call through the pipeline and, when it is answered 428
// ApprovalRequired, asks the person as the client allows; turn receives
// a 2026-07-28 input request. A retry carrying the person's answer is
// settled before the call runs again.
func (b *approvalBridge) runCall(ctx context.Context, req mcp.CallToolRequest, call *pipeline.Call, turn *approvalTurn) *seam.Result {
	if retriedWithAnswers(req) {
		return b.answered(ctx, req, call)
	}
	// The pipeline fills in the caller's identity; a requestState binds
	// the call as it came, as its retry comes.
	bound := bindingOf(call)
	out := b.host.run(ctx, call)
	ask, ok := approvalAskOf(out)
	if !ok || !ask.AskClient || !b.host.approves(call, ask.Tool) {
		return out
	}
	switch approvalAskWay(ctx) {
	case askElicit:
		res, err := b.host.elicit(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params:  ask.elicitation(),
		})
		if err != nil {
			if ctx.Err() != nil {
				return pipeline.Fail(errs.New(499, errs.Cancelled, "the call ended before the person answered the approval question; nothing was recorded"))
			}
			return pipeline.Fail(out.Err.With("asked", "failed").With("ask_error", err.Error()))
		}
		return b.decide(ctx, call, ask, res, viaElicitation, "elicitation", out)
	case askInputRequest:
		if b.signer == nil {
			return out
		}
		token, err := b.signer.sign(bound, call.Caller, ask)
		if err != nil {
			return out
		}
		turn.input = &mcp.CallToolResult{
			Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired},
			MultiRoundTripResult: mcp.MultiRoundTripResult{
				InputRequests: mcp.InputRequests{approvalInputKey: mcp.NewElicitationInputRequest(ask.elicitation())},
				RequestState:  token,
			},
		}
	}
	return out
}

// answered settles a 2026-07-28 retry: the requestState must be the one
// the host signed for this very call, and inputResponses must hold the
// person's answer; otherwise a 400 and nothing is recorded.
func (b *approvalBridge) answered(ctx context.Context, req mcp.CallToolRequest, call *pipeline.Call) *seam.Result {
	if req.Params.RequestState == "" {
		return pipeline.Fail(errs.Invalid("requestState", "required", "inputResponses came without requestState: retry with the requestState the server answered, verbatim"))
	}
	if b.signer == nil {
		return pipeline.Fail(errs.Invalid("requestState", "signature", "this server issues no requestState, so it cannot take this one: call the tool again without it"))
	}
	st, e := b.signer.verify(req.Params.RequestState, bindingOf(call))
	if e != nil {
		return pipeline.Fail(e)
	}
	ask := approvalAsk{Tool: st.ApproveTool, Args: st.ApproveArgs, AskClient: true}
	field := "inputResponses." + approvalInputKey
	if _, present := req.Params.InputResponses[approvalInputKey]; !present {
		return pipeline.Fail(errs.Invalid(field, "required", "the retry carries no answer to the approval question: put the client's elicitation result under inputResponses.approval"))
	}
	res := server.ElicitationResponse(req.Params.InputResponses, approvalInputKey)
	if res == nil {
		return pipeline.Fail(errs.Invalid(field, "type", "inputResponses.approval is not an elicitation result ({action, content})"))
	}
	if !b.host.approves(call, ask.Tool) {
		return pipeline.Fail(errs.Newf(503, errs.PluginUnavailable, "the tool %s that records the decision is no longer loaded; nothing was recorded", ask.Tool))
	}
	// Recorded as, and re-run as, the caller the first call was found to be.
	as := *call
	as.Caller.ID, as.Caller.Source = st.ByID, st.BySource
	return b.decide(ctx, &as, ask, res, viaInputRequest, field, nil)
}

// decide acts on the person's answer res to ask about call: a decline or a
// cancel returns the 428 (original, else the call's own answer now) with
// details.asked saying so; an approval is recorded and the call runs once
// more; a rejection is recorded and refused with the person's reason.
func (b *approvalBridge) decide(ctx context.Context, call *pipeline.Call, ask approvalAsk, res *mcp.ElicitationResult, via, field string, original *seam.Result) *seam.Result {
	action, ans, e := readApprovalAnswer(res, field)
	if e != nil {
		return pipeline.Fail(e)
	}
	if action != mcp.ElicitationResponseActionAccept {
		if original == nil {
			again := *call
			original = b.host.run(ctx, &again)
		}
		if original.Err != nil && original.Err.Code == errs.ApprovalRequired {
			asked := "declined"
			if action == mcp.ElicitationResponseActionCancel {
				asked = "cancelled"
			}
			return pipeline.Fail(original.Err.With("asked", asked))
		}
		return original // decided elsewhere meanwhile
	}
	args, err := ask.decisionArgs(ans, via)
	if err != nil {
		return pipeline.Fail(errs.Newf(500, errs.Internal, "the approve tool's arguments cannot be encoded: %v", err))
	}
	recorded := b.host.record(ctx, ask.Tool, args, call.Caller)
	if recorded.Err != nil {
		return recorded
	}
	if ans.Decision == decisionReject {
		return pipeline.Fail(rejected(ans, via))
	}
	again := *call
	return b.host.run(ctx, &again)
}

// rejected is the refusal of a move a person rejected, naming their reason.
func rejected(ans approvalAnswer, via string) *errs.Error {
	msg := "a person rejected this move"
	if ans.Reason != "" {
		msg += ": " + ans.Reason
	} else {
		msg += " (no reason given)"
	}
	return errs.New(403, errs.Forbidden, msg+"; the decision is recorded, so change the work before asking again").
		With("decision", decisionReject).With("reason", ans.Reason).With("via", via)
}

// bindingOf is what a requestState binds of call: the client session and
// the caller (a 2026-07-28 HTTP request has no session, so the caller is
// what holds it there), the tool and its arguments.
func bindingOf(call *pipeline.Call) callBinding {
	c := call.Caller
	return callBinding{session: c.ClientSessionID, source: c.Source, id: c.ID, tool: call.Name, args: call.Args}
}

// hostApprovals is the Server as the bridge's host.
type hostApprovals struct{ srv *Server }

func (h hostApprovals) run(ctx context.Context, c *pipeline.Call) *seam.Result {
	return h.srv.pipe.Run(ctx, c)
}

func (h hostApprovals) record(ctx context.Context, tool string, args json.RawMessage, caller seam.Caller) *seam.Result {
	return h.srv.CallInternal(ctx, tool, args, caller)
}

func (h hostApprovals) elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return h.srv.mcp.RequestElicitation(ctx, r)
}

func (h hostApprovals) approves(c *pipeline.Call, tool string) bool {
	t, ok := h.srv.catalog.Get(tool)
	return ok && c.Tool != nil && t.Toolset == sdk.InternalToolset && t.Owner == c.Tool.Owner
}
