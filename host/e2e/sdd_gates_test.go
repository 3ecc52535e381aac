package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"
)

// sddPhaseMove is an agent's sdd_state set currentPhase: the structured
// output, or the error envelope's error, and the call's status.
func (ec *eraClient) sddPhaseMove(phase string) (map[string]any, bool) {
	ec.t.Helper()
	return ec.try("sdd_state", map[string]any{"action": "set", "keyPath": "currentPhase", "value": phase})
}

// try calls a tool and returns its structured output, or its error
// envelope's error and true.
func (ec *eraClient) try(name string, args map[string]any) (map[string]any, bool) {
	ec.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := ec.c.CallTool(ctx, req)
	if err != nil {
		// A tool the session does not list is a JSON-RPC error.
		return map[string]any{"message": err.Error()}, true
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

// currentPhase is the phase sdd_dash reports.
func (ec *eraClient) currentPhase() string {
	ec.t.Helper()
	out, _ := ec.call("sdd_dash", map[string]any{"format": "json"})
	d, _ := out["dashboard"].(map[string]any)
	st, _ := d["stats"].(map[string]any)
	p, _ := st["currentPhase"].(string)
	return p
}

// The sdd phase gate (docs/decisions.md D45), with the real binary: the
// operator turns it on with the CLI; an agent that cannot be asked is
// refused 428 naming `cairn sdd approve` and cannot turn the gate off
// through sdd_state; the operator lists and approves the move, which
// makes the phase current; an agent whose client answers elicitation is
// asked and, approved, its own sdd_state call succeeds.
func TestSddPhaseGates(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	env := append([]string{}, sharedEnv...)
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCairn(t, w, "", append(append([]string{}, env...), "USER=tester"), args...)
		if code != 0 {
			t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	plain := gateClient(t, w, "", false, nil, append(append([]string{}, env...), "CAIRN_AGENT_ID=agent-1")...)
	if _, failed := plain.sddPhaseMove("1"); failed {
		t.Fatal("with the gate off the agent could not set the phase")
	}
	if out := cli("sdd", "gates", "on"); !strings.Contains(out, "sdd phase gates on") {
		t.Fatalf("cairn sdd gates on: %s", out)
	}

	e, failed := plain.sddPhaseMove("2")
	d, _ := e["details"].(map[string]any)
	if msg, _ := e["message"].(string); !failed || e["code"] != "ERR_APPROVAL_REQUIRED" || !strings.Contains(msg, "cairn sdd approve") ||
		d["phase_from"] != "1" || d["phase_to"] != "2" || d["ask_client"] != true {
		t.Fatalf("the agent's move: %v; want 428 naming cairn sdd approve", e)
	}
	if p := plain.currentPhase(); p != "1" {
		t.Fatalf("the refused move left phase %q", p)
	}

	// The agent cannot switch its own gate off: the gate tools are not
	// listed to it, and sdd_state's keys are not the gate.
	for _, name := range []string{"sdd_gates", "sdd_gate_approve", "sdd_gate_requests"} {
		if _, failed := plain.try(name, map[string]any{"mode": "off", "phase": "2", "decision": "approve"}); !failed {
			t.Fatalf("an agent session called %s", name)
		}
	}
	for _, key := range []string{"phaseGates.mode", "gates", "mode"} {
		if _, failed := plain.try("sdd_state", map[string]any{"action": "set", "keyPath": key, "value": "off"}); failed {
			t.Fatalf("sdd_state set %s failed", key)
		}
	}
	if out := cli("sdd", "gates"); !strings.Contains(out, "sdd phase gates on") {
		t.Fatalf("after the agent's writes: %s", out)
	}
	if _, failed := plain.sddPhaseMove("2"); !failed {
		t.Fatal("after the agent's writes its move went through")
	}

	// The row: to, from, mode, who asked, when.
	listed := cli("sdd", "approvals")
	hasRow := false
	for _, l := range strings.Split(listed, "\n") {
		f := strings.Fields(l)
		hasRow = hasRow || (len(f) >= 5 && strings.Join(f[:4], " ") == "2 1 on agent-1")
	}
	if !hasRow {
		t.Fatalf("cairn sdd approvals does not list the move:\n%s", listed)
	}
	if out := cli("sdd", "approve"); !strings.Contains(out, "approved") || !strings.Contains(out, "operator:tester via cli") {
		t.Fatalf("cairn sdd approve:\n%s", out)
	}
	if p := plain.currentPhase(); p != "2" {
		t.Fatalf("after the approval the phase is %q; want 2", p)
	}
	if out := cli("sdd", "approvals"); !strings.Contains(out, "no move of the sdd phase waits") {
		t.Fatalf("after the approval: %s", out)
	}

	// A client that answers elicitation: the person is asked, approves,
	// and the agent's own call moves the phase.
	p := &person{answers: map[string]*mcp.ElicitationResult{
		"from “2” to “3”": accept(map[string]any{"decision": "approve"}),
	}}
	asking := gateClient(t, w, "", false, p, append(append([]string{}, env...), "CAIRN_AGENT_ID=agent-2")...)
	if out, failed := asking.sddPhaseMove("3"); failed {
		t.Fatalf("the asked move: %v", out)
	}
	if q := p.questions(); len(q) != 1 || q[0].Message != "Approve moving the sdd phase from “2” to “3”, asked by agent-2?" {
		t.Fatalf("the person was asked %+v", q)
	}
	if ph := asking.currentPhase(); ph != "3" {
		t.Fatalf("after the person's approval the phase is %q; want 3", ph)
	}
	dash, _ := asking.call("sdd_dash", map[string]any{})
	if text, _ := dash["text"].(string); !strings.Contains(text, "Decided: approve 2 → 3 by agent-2 (person at the client) via elicitation") {
		t.Fatalf("sdd_dash does not show the decision:\n%s", text)
	}
}

// TestSddPhaseGateInTheDashboard drives the approvals page in Chromium
// (docs/decisions.md D45): an agent's held phase move is listed beside the
// tasks; a rejection needs a reason and the agent's next attempt is
// refused with it; asked again, the person approves it and the phase is
// current.
func TestSddPhaseGateInTheDashboard(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	setPhase := func(p string) (map[string]any, bool) {
		t.Helper()
		res := agent.call("sdd_state", map[string]any{"action": "set", "keyPath": "currentPhase", "value": p})
		body := structured(t, res)
		if res.IsError {
			e, _ := body["error"].(map[string]any)
			return e, true
		}
		return body, false
	}
	if _, failed := setPhase("1"); failed {
		t.Fatal("with the gate off the agent could not set the phase")
	}
	if code, out, errOut := runCairn(t, w, "", env, "sdd", "gates", "on"); code != 0 {
		t.Fatalf("cairn sdd gates on: %s%s", out, errOut)
	}
	if e, failed := setPhase("2"); !failed || e["code"] != "ERR_APPROVAL_REQUIRED" {
		t.Fatalf("the agent's move was not held: %v", e)
	}
	phase := func() string {
		t.Helper()
		d, _ := ok(t, agent, "sdd_dash", map[string]any{"format": "json"})["dashboard"].(map[string]any)
		st, _ := d["stats"].(map[string]any)
		p, _ := st["currentPhase"].(string)
		return p
	}

	ctx, _ := newBrowser(t)
	login := uiURL(t, w, env, "--allow-actions")
	base := login[:strings.Index(login, "/login")]
	row := `tr[data-approval][data-phase="2"]`
	reject := row + ` form[data-gate=reject]`
	var badge, msg string
	if err := chromedp.Run(ctx, chromedp.Navigate(login), chromedp.WaitVisible(`#board`, chromedp.ByQuery),
		chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-pending]`, chromedp.ByQuery), chromedp.Text(`[data-pending]`, &badge, chromedp.ByQuery)); err != nil {
		t.Fatalf("approvals page: %v", err)
	}
	screenshot(t, ctx, artifactDir(t), "sdd-phase-approvals")
	if err := chromedp.Run(ctx, chromedp.Click(reject+` button`, chromedp.ByQuery),
		chromedp.WaitVisible(row+`[data-refused=reason]`, chromedp.ByQuery),
		chromedp.Text(reject+` [data-error-for=reason]`, &msg, chromedp.ByQuery)); err != nil {
		t.Fatalf("approvals page: %v", err)
	}
	if badge != "1" || !strings.Contains(msg, "reason") {
		t.Errorf("badge %q, refusal beside the reason %q", badge, msg)
	}
	if err := chromedp.Run(ctx, chromedp.SendKeys(reject+` [name=reason]`, "Finish phase 1's tests", chromedp.ByQuery),
		chromedp.Click(reject+` button`, chromedp.ByQuery),
		chromedp.WaitVisible(row+`[data-decided=rejected]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("reject: %v", err)
	}
	e, failed := setPhase("2")
	if rej, _ := e["details"].(map[string]any)["rejected"].(map[string]any); !failed || rej["reason"] != "Finish phase 1's tests" || !strings.Contains(fmt.Sprint(rej["by"]), "alice") {
		t.Fatalf("after the rejection the agent's move: %v", e)
	}

	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.Click(row+` form[data-gate=approve] button`, chromedp.ByQuery),
		chromedp.WaitVisible(row+`[data-decided=approved]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if p := phase(); p != "2" {
		t.Fatalf("after approving the phase is %q; want 2", p)
	}
}
