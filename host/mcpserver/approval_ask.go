package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// approvalAsk is what a plugin's 428 ApprovalRequired tells the host about
// asking a person through the client (docs/decisions.md D45): the question,
// the internal tool that records the person's decision and its arguments,
// and whether the client may be asked at all.
type approvalAsk struct {
	Question string
	Tool     string
	// Args is the approve tool's arguments, a JSON object.
	Args json.RawMessage
	// AskClient is false where the plugin wants the decision from the
	// dashboard or the CLI only (a strict project).
	AskClient bool
}

// approvalAskOf reads out's 428 ApprovalRequired. ok is false for any other
// outcome, and for one whose details lack a usable approve tool: that 428
// goes to the client as it is.
func approvalAskOf(out *seam.Result) (approvalAsk, bool) {
	if out == nil || out.Err == nil || out.Err.Code != errs.ApprovalRequired {
		return approvalAsk{}, false
	}
	d := out.Err.Details
	approve, _ := d["approve"].(map[string]any)
	tool, _ := approve["tool"].(string)
	args, isObject := approve["args"].(map[string]any)
	if approve["args"] == nil {
		args, isObject = map[string]any{}, true
	}
	if tool == "" || !isObject {
		return approvalAsk{}, false
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return approvalAsk{}, false
	}
	ask := approvalAsk{Tool: tool, Args: raw}
	ask.Question, _ = d["question"].(string)
	if ask.Question == "" {
		ask.Question = out.Err.Message
	}
	askClient, _ := d["ask_client"].(bool)
	mode, _ := d["mode"].(string)
	ask.AskClient = askClient && mode != "strict"
	return ask, true
}

// Approval decisions, as the elicitation offers them and the approve tool
// takes them.
const (
	decisionApprove = "approve"
	decisionReject  = "reject"
)

// How the person's answer reached the host, as the approve tool records it.
const (
	viaElicitation  = "elicitation"
	viaInputRequest = "input_request"
)

// approvalInputKey names the one input request of an approval's
// InputRequiredResult.
const approvalInputKey = "approval"

// elicitation is the form the person is shown: the plugin's question, a
// choice of approve or reject (titled for people), and a reason.
func (a approvalAsk) elicitation() mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Message: a.Question,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":  "string",
					"title": "Decision",
					"enum":  []string{decisionApprove, decisionReject},
					// 2025-11-25's titled single-select: the values
					// above, with the words a person reads.
					"oneOf": []map[string]string{
						{"const": decisionApprove, "title": "Approve"},
						{"const": decisionReject, "title": "Reject"},
					},
				},
				"reason": map[string]any{
					"type":        "string",
					"title":       "Reason",
					"description": "Required to reject: what the agent must change.",
				},
			},
			"required": []string{"decision"},
		},
	}
}

// approvalAnswer is a person's accepted answer to the elicitation.
type approvalAnswer struct {
	Decision, Reason string
}

// readApprovalAnswer checks the client's elicitation result against the
// form: action accept, decline or cancel; on accept, an object whose
// decision is approve or reject and whose reason, when given, is a string,
// and nothing else. A client that answers otherwise gets a typed 400 and
// nothing is recorded. field is where the answer came from, for the error.
func readApprovalAnswer(res *mcp.ElicitationResult, field string) (mcp.ElicitationResponseAction, approvalAnswer, *errs.Error) {
	if res == nil {
		return "", approvalAnswer{}, errs.Invalid(field, "required", "the client gave no answer to the approval question")
	}
	switch res.Action {
	case mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		return res.Action, approvalAnswer{}, nil
	case mcp.ElicitationResponseActionAccept:
	default:
		return "", approvalAnswer{}, errs.Invalidf(field+".action", "enum", "the answer's action is %q; it must be accept, decline or cancel", res.Action)
	}
	content, ok := res.Content.(map[string]any)
	if !ok {
		return "", approvalAnswer{}, errs.Invalid(field+".content", "type", "an accepted approval answer must be an object with decision (approve or reject) and an optional reason")
	}
	var ans approvalAnswer
	extra := make([]string, 0, len(content))
	for k := range content {
		if k != "decision" && k != "reason" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return "", ans, errs.Invalidf(field+".content."+extra[0], "additionalProperties", "the approval answer has decision and reason only, not %q", extra[0])
	}
	d, isString := content["decision"].(string)
	if !isString || (d != decisionApprove && d != decisionReject) {
		return "", ans, errs.Invalidf(field+".content.decision", "enum", "the decision must be %q or %q, not %s", decisionApprove, decisionReject, jsonText(content["decision"]))
	}
	ans.Decision = d
	if r, present := content["reason"]; present {
		if ans.Reason, isString = r.(string); !isString {
			return "", approvalAnswer{}, errs.Invalid(field+".content.reason", "type", "the reason must be a string")
		}
	}
	return res.Action, ans, nil
}

// decisionArgs are the approve tool's arguments for ans: the plugin's own,
// with the decision, how it came, its reason, and complete_move false (the
// host re-runs the move itself, so the move stays the agent's call).
func (a approvalAsk) decisionArgs(ans approvalAnswer, via string) (json.RawMessage, error) {
	args := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(a.Args))
	dec.UseNumber() // the plugin's numbers pass as written
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	args["decision"], args["via"], args["complete_move"] = ans.Decision, via, false
	if ans.Reason != "" {
		args["reason"] = ans.Reason
	}
	return json.Marshal(args)
}

// jsonText shows a value of the client's answer in an error message.
func jsonText(v any) string {
	if v == nil {
		return "missing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
