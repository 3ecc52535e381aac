package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestUIScreenshots remakes the dashboard's screenshots in docs/img from
// sample work (seedSampleWork, then one sealed record rewritten in the
// store), in headless Chromium at 1280×800:
//
//	CAIRN_SCREENSHOTS=1 go test -count=1 -run TestUIScreenshots ./host/e2e/
//
// It is skipped otherwise: it writes into the repository.
func TestUIScreenshots(t *testing.T) {
	if os.Getenv("CAIRN_SCREENSHOTS") != "1" {
		t.Skip("set CAIRN_SCREENSHOTS=1 to remake docs/img/dashboard-*.png")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "docs", "img"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	// A project of 200 tasks for the dependency graph and the burn-up,
	// filed first: the board opens where a task changed last.
	seedGraphProject(t, w, env, agent, "storefront", 200)
	work := seedSampleWork(t, w, env, agent)
	// The spec-driven workflow: a planned phase, skills bound to agents, a
	// queued spawn and a lease on the task in progress.
	ok(t, agent, "sdd_plan", map[string]any{"phase": "1", "context": "Card payments at checkout\n- validate cards\n- payment intents\n- confirm on webhook\nsuccess: a test card pays an order end to end"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "register", "skillId": "go-testing", "title": "Go testing", "description": "Table tests and fakes"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "register", "skillId": "payments", "title": "Payments", "description": "Provider APIs, idempotency keys, webhooks"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "bind", "agentId": "sdd-planner", "skillId": "payments"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "bind", "agentId": "sdd-verifier", "skillId": "go-testing"})
	ok(t, agent, "sdd_agent", map[string]any{"action": "enqueue", "intent": "plan_phase"})
	ok(t, agent, "sdd_lease", map[string]any{"action": "issue", "taskId": work.Intent, "scope": []string{"payments/intents/"}})
	// Approval on in checkout: the task in review waits for a person.
	if code, _, errOut := runCairn(t, w, "", env, "project", "approval", "checkout", "on"); code != 0 {
		t.Fatalf("project approval: %s", errOut)
	}
	if res := agent.call("task_update", map[string]any{"task_id": work.Review, "status": "done"}); !res.IsError {
		t.Fatalf("the move to done did not wait for approval: %v", structured(t, res))
	}

	// Someone rewrites the sealed session's thought in the store while no
	// daemon runs: the audit page shows the broken link at its position.
	agent.close()
	if code, _, errOut := runCairn(t, w, "", env, "stop"); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	luhn, err := strconv.ParseUint(strings.TrimPrefix(work.Luhn, "T-"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	tamperThought(t, w, luhn, 1, "and again on the server", "but never on the server") // same length: the link encoding stays whole
	// Two agents at work for the system page's sessions.
	for _, id := range []string{"agent-b", "agent-c"} {
		w.serve(append(env, "CAIRN_AGENT_ID="+id, "CAIRN_PROJECT=checkout")...)
	}

	ctx, _ := newBrowser(t)
	login := uiURL(t, w, env, "--allow-actions")
	base := login[:strings.Index(login, "/login")]
	for _, shot := range []struct {
		name, address, ready string
	}{
		{"board", login, fmt.Sprintf(`.card[data-task=%q]`, work.Parent)},
		{"task", base + "/task/" + work.Parent, `[data-description] table`},
		{"audits", base + "/audits", fmt.Sprintf(`tr[data-session=%q]`, work.OpenAudit)},
		{"audit", base + "/audits/" + work.Sealed, `tr.broken`},
		{"audit-open", base + "/audits/" + work.OpenAudit, `[data-state="open"]`},
		{"sdd", base + "/sdd", `table.matrix`},
		{"system", base + "/system", `table.sessions`},
		{"graph", base + "/graph?project=storefront", `svg[data-graph]`},
		{"burnup", base + "/burnup?project=storefront", `svg[data-burnup]`},
		{"approvals", base + "/approvals", `tr[data-approval]`},
	} {
		start := time.Now()
		wait, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := chromedp.Run(wait, chromedp.Navigate(shot.address), chromedp.WaitVisible(shot.ready, chromedp.ByQuery), chromedp.WaitVisible(`#live.on`, chromedp.ByQuery))
		cancel()
		if err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText`, &text))
			t.Fatalf("%s: %v; the page reads:\n%s", shot.name, err, text)
		}
		t.Logf("%s ready in %s", shot.name, time.Since(start).Round(time.Millisecond))
		if shot.name == "task" { // the whole page: fields, description, related tasks, trail
			var buf []byte
			if err := chromedp.Run(ctx, chromedp.Sleep(150*time.Millisecond), chromedp.FullScreenshot(&buf, 100)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "dashboard-task.png"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			screenshot(t, ctx, dir, shot.name)
		}
		fi, err := os.Stat(filepath.Join(dir, "dashboard-"+shot.name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 300<<10 {
			t.Errorf("dashboard-%s.png is %d bytes, want under 300 KB", shot.name, fi.Size())
		}
	}

	// The edit form, with a move to blocked refused for want of a reason:
	// the refusal stands beside the field it names.
	edit := `form[data-form=edit]`
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+work.Parent), chromedp.WaitVisible(edit, chromedp.ByQuery),
		chromedp.SetValue(edit+` [name=status]`, "blocked", chromedp.ByQuery), chromedp.Click(edit+` button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(edit+`[data-refused="blocked_reason"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("edit-h").scrollIntoView({block: "start"})`, nil)); err != nil {
		t.Fatalf("edit: %v", err)
	}
	screenshot(t, ctx, dir, "edit")
}
