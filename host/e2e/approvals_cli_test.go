package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Approvals that block (docs/decisions.md D45), with a client that cannot
// be asked: the operator turns approval on with the CLI, the agent's move
// to done is refused 428 naming where to approve, the operator lists and
// decides it from the CLI, and the agent sees the decision in task_get and
// task_context. No agent session reaches the approval tools.
func TestApprovalsThroughTheCLI(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=3s", "CAIRN_PROJECT=p"}
	s, err := startSession(w, append(append([]string{}, env...), "CAIRN_AGENT_ID=agent-1")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	operator := append(append([]string{}, env...), "USER=tester")
	cli := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := runCairn(t, w, "", operator, args...)
		if code != wantCode {
			t.Fatalf("cairn %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, errOut)
		}
		return out + errOut
	}
	hasLine := func(what, out string, words ...string) {
		t.Helper()
		want := strings.Join(words, " ")
		for _, l := range strings.Split(out, "\n") {
			if strings.Join(strings.Fields(l), " ") == want {
				return
			}
		}
		t.Fatalf("%s: no line %q in\n%s", what, want, out)
	}
	agent := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		out, err := callOK(s, tool, args)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	toReview := func(title string) string {
		t.Helper()
		id, _ := agent("task_create", map[string]any{"title": title, "project": "p"})["task_id"].(string)
		agent("task_update", map[string]any{"task_id": id, "status": "todo"})
		agent("task_update", map[string]any{"task_id": id, "claim": true})
		agent("task_update", map[string]any{"task_id": id, "status": "review"})
		return id
	}
	refusedForApproval := func(id string) map[string]any {
		t.Helper()
		res := s.call("task_update", map[string]any{"task_id": id, "status": "done"})
		body := structured(t, res)
		e, _ := body["error"].(map[string]any)
		if !res.IsError || metaStatus(res) != 428 || e["code"] != "ERR_APPROVAL_REQUIRED" {
			t.Fatalf("move of %s to done: status %v, %v; want 428 ERR_APPROVAL_REQUIRED", id, metaStatus(res), body)
		}
		if msg, _ := e["message"].(string); !strings.Contains(msg, "cairn task approve "+id) {
			t.Fatalf("the refusal does not name where to approve: %q", msg)
		}
		return e
	}

	// No agent session lists or calls the approval tools.
	tools := s.tools()
	for _, name := range []string{"task_approve", "task_approvals", "project_approval"} {
		if _, listed := tools[name]; listed {
			t.Errorf("%s is listed to an agent session", name)
		}
	}

	cli(0, "project", "add", "p")
	hasLine("project approval", cli(0, "project", "approval", "p", "on"), "project", "p:", "approval", "on", "(a", "move", "to", "done", "waits", "for", "a", "person's", "approval;", "the", "person", "at", "the", "agent's", "client", "may", "be", "asked)")

	first := toReview("ship the importer")
	e := refusedForApproval(first)
	if d, _ := e["details"].(map[string]any); d["ask_client"] != true || d["mode"] != "on" || d["project"] != "p" {
		t.Fatalf("details %v", d)
	}
	// The row: id, project, mode, status, requester, time, title.
	hasRow := false
	for _, l := range strings.Split(cli(0, "task", "approvals"), "\n") {
		f := strings.Fields(l)
		hasRow = hasRow || (len(f) == 9 && strings.Join(append(f[:5:5], f[6:]...), " ") == first+" p on review agent-1 ship the importer")
	}
	if !hasRow {
		t.Fatalf("cairn task approvals does not list %s:\n%s", first, cli(0, "task", "approvals"))
	}

	// The agent cannot approve itself, not even by naming the tool.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := s.callCtx(ctx, "task_approve", map[string]any{"task_id": first, "decision": "approve"}); err == nil && !res.IsError {
		t.Fatalf("an agent session approved %s: %v", first, structured(t, res))
	}

	hasLine("task approve", cli(0, "task", "approve", first), "status", "review", "→", "done")
	got := agent("task_get", map[string]any{"task_id": first})
	if a, _ := got["approval"].(map[string]any); got["status"] != "done" || a["state"] != "approved" || a["by"] != "operator:tester" || a["via"] != "cli" {
		t.Fatalf("the agent sees %s as %v", first, got)
	}
	hasLine("task approvals", cli(0, "task", "approvals"), "no", "task", "waits", "for", "approval")

	// A rejection sends the task back with its reason, which the agent
	// reads in task_context and in its next refusal.
	second := toReview("document the importer")
	refusedForApproval(second)
	cli(2, "task", "approve", second, "--reject")
	hasLine("task approve --reject", cli(0, "task", "approve", second, "--reject", "--reason", "add the examples"), "status", "review", "→", "in_progress")
	brief := agent("task_context", map[string]any{})
	var seen map[string]any
	for _, x := range brief["tasks"].([]any) {
		if tk := x.(map[string]any); tk["task_id"] == second {
			seen = tk
		}
	}
	if a, _ := seen["approval"].(map[string]any); seen["status"] != "in_progress" || a["state"] != "rejected" || a["reason"] != "add the examples" {
		t.Fatalf("task_context shows %s as %v", second, seen)
	}
	agent("task_update", map[string]any{"task_id": second, "status": "review"})
	if d, _ := refusedForApproval(second)["details"].(map[string]any); d["rejected"].(map[string]any)["reason"] != "add the examples" {
		t.Fatalf("the next refusal does not say why: %v", d)
	}
}
