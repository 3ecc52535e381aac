package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUIApprovals drives the pending-approvals page in Chromium
// (docs/decisions.md D45): with approval on in a project, an agent's move
// to done waits; the page lists it with a count in the navigation; the
// person approves one (it is done, approved by them from the dashboard),
// rejects another with a reason (it is back in progress, the reason on
// it), is stopped before sending a rejection without a reason, and is
// refused approving a move they asked for themselves, the refusal shown in
// the row.
func TestUIApprovals(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	// alice also runs an agent under her own name: its request is hers.
	self := w.serve(append(env, "CAIRN_AGENT_ID=alice")...)
	for _, args := range [][]string{{"project", "add", "shop"}, {"project", "approval", "shop", "on"}} {
		if code, out, errOut := runCairn(t, w, "", env, args...); code != 0 {
			t.Fatalf("cairn %s: %s%s", strings.Join(args, " "), out, errOut)
		}
	}
	toDone := func(s *session, title string) string {
		t.Helper()
		id := taskID(t, s, map[string]any{"title": title, "project": "shop"})
		for _, st := range []string{"todo", "in_progress", "review"} {
			ok(t, s, "task_update", map[string]any{"task_id": id, "status": st})
		}
		res := s.call("task_update", map[string]any{"task_id": id, "status": "done"})
		if e, _ := structured(t, res)["error"].(map[string]any); !res.IsError || e["code"] != "ERR_APPROVAL_REQUIRED" {
			t.Fatalf("the move of %s to done did not wait for approval: %v", id, structured(t, res))
		}
		return id
	}
	approveMe := toDone(agent, "Ship the receipts")
	rejectMe := toDone(agent, "Email the receipts")
	mine := toDone(self, "Print the receipts")

	ctx, _ := newBrowser(t)
	login := uiURL(t, w, env, "--allow-actions")
	base := login[:strings.Index(login, "/login")]
	row := func(id string) string { return fmt.Sprintf(`tr[data-approval][data-task=%q]`, id) }
	var badge string
	var rows int
	if err := chromedp.Run(ctx, chromedp.Navigate(login), chromedp.WaitVisible(`#board`, chromedp.ByQuery),
		chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(row(approveMe), chromedp.ByQuery),
		chromedp.WaitVisible(`[data-pending]`, chromedp.ByQuery), chromedp.Text(`[data-pending]`, &badge, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('tr[data-approval]').length`, &rows)); err != nil {
		t.Fatalf("approvals page: %v", err)
	}
	if badge != "3" || rows != 3 {
		t.Errorf("badge %q, %d rows; want 3 and 3", badge, rows)
	}
	screenshotTo := artifactDir(t)

	t.Run("approve moves the task to done", func(t *testing.T) {
		var out string
		if err := chromedp.Run(ctx, chromedp.Click(row(approveMe)+` form[data-approve=approve] button`, chromedp.ByQuery),
			chromedp.WaitVisible(row(approveMe)+`[data-decided=approved]`, chromedp.ByQuery),
			chromedp.Text(row(approveMe)+` .result`, &out, chromedp.ByQuery)); err != nil {
			t.Fatalf("approve: %v", err)
		}
		got := ok(t, agent, "task_get", map[string]any{"task_id": approveMe})
		a, _ := got["approval"].(map[string]any)
		if got["status"] != "done" || a["state"] != "approved" || !strings.Contains(fmt.Sprint(a["by"]), "alice") || a["via"] != "dashboard" {
			t.Errorf("after approving (%q): %v", out, got)
		}
	})

	t.Run("a rejection needs a reason and sends the task back", func(t *testing.T) {
		reject := row(rejectMe) + ` form[data-approve=reject]`
		var msg string
		if err := chromedp.Run(ctx, chromedp.Click(reject+` button`, chromedp.ByQuery),
			chromedp.WaitVisible(row(rejectMe)+`[data-refused=reason]`, chromedp.ByQuery),
			chromedp.Text(reject+` [data-error-for=reason]`, &msg, chromedp.ByQuery)); err != nil {
			t.Fatalf("reject without a reason: %v", err)
		}
		if !strings.Contains(msg, "reason") {
			t.Errorf("the refusal beside the reason reads %q", msg)
		}
		if st := ok(t, agent, "task_get", map[string]any{"task_id": rejectMe})["status"]; st != "review" {
			t.Fatalf("a rejection without a reason moved %s to %v", rejectMe, st)
		}
		if err := chromedp.Run(ctx, chromedp.SendKeys(reject+` [name=reason]`, "Add the VAT line", chromedp.ByQuery),
			chromedp.Click(reject+` button`, chromedp.ByQuery),
			chromedp.WaitVisible(row(rejectMe)+`[data-decided=rejected]`, chromedp.ByQuery)); err != nil {
			t.Fatalf("reject: %v", err)
		}
		got := ok(t, agent, "task_get", map[string]any{"task_id": rejectMe})
		if a, _ := got["approval"].(map[string]any); got["status"] != "in_progress" || a["state"] != "rejected" || a["reason"] != "Add the VAT line" {
			t.Errorf("after rejecting: %v", got)
		}
	})

	t.Run("approving one's own request is refused in the row", func(t *testing.T) {
		var out, refused string
		if err := chromedp.Run(ctx, chromedp.Click(row(mine)+` form[data-approve=approve] button`, chromedp.ByQuery),
			chromedp.WaitVisible(row(mine)+`[data-refused]`, chromedp.ByQuery),
			chromedp.Text(row(mine)+` .result`, &out, chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`document.querySelector('%s').dataset.refused`, row(mine)), &refused)); err != nil {
			t.Fatalf("self-approval: %v", err)
		}
		t.Logf("self-approval refused (%s): %s", refused, out)
		if out == "" {
			t.Error("the refusal shows no message")
		}
		if st := ok(t, agent, "task_get", map[string]any{"task_id": mine})["status"]; st != "review" {
			t.Errorf("a self-approval moved %s to %v", mine, st)
		}
		screenshot(t, ctx, screenshotTo, "approvals")
	})

	t.Run("a read-only login sees what waits but cannot decide", func(t *testing.T) {
		var forms int
		var note, main string
		if err := chromedp.Run(ctx, chromedp.Navigate(uiURL(t, w, env)), chromedp.WaitVisible(`#board`, chromedp.ByQuery),
			chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(row(mine), chromedp.ByQuery),
			chromedp.Text(`[data-read-only]`, &note, chromedp.ByQuery), chromedp.Text(`main`, &main, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('form[data-approve]').length`, &forms)); err != nil {
			t.Fatalf("read-only approvals page: %v", err)
		}
		if forms != 0 || !strings.Contains(note, "cairn ui --allow-actions") || strings.Contains(main, "CAIRN_MODE") || strings.Contains(main, "ERR_") {
			t.Errorf("read-only approvals page: %d forms, note %q, page %q", forms, note, main)
		}
	})
}
