package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// sampleWork is what seedSampleWork filed: the ids the dashboard tests and
// the screenshots look at.
type sampleWork struct {
	Project              string
	Parent, Luhn, Intent string
	Blocked, Review      string
	OpenAudit, Sealed    string
}

// sampleDescription is a task description as agents write it: Markdown
// with a plan, code and a table.
const sampleDescription = `Take card payments at checkout through the payment provider's **payment intents**.

## Plan
1. Validate the card number before it leaves the browser (Luhn check).
2. Create a payment intent per order; store its id with the order.
3. Confirm on the provider's webhook, never on the redirect.

Run ` + "`go test ./payments/...`" + ` before moving a sub-task to review.

| Case | Expected |
|------|----------|
| 4242 4242 4242 4242 | accepted |
| 4000 0000 0000 0002 | declined, shown inline |

See the [provider's guide](https://example.com/docs/payments) for the test cards.`

// seedSampleWork files a small checkout service's work in project
// "checkout", as agents would: tasks in every column, with priorities,
// assignees, labels, sub-tasks and dependencies, a decision trail, one
// sealed audit session and one still open.
func seedSampleWork(t *testing.T, w *workspace, env []string, agent *session) sampleWork {
	t.Helper()
	if code, _, errOut := runCairn(t, w, "", env, "project", "add", "checkout"); code != 0 {
		t.Fatalf("project add checkout: %s", errOut)
	}
	p := "checkout"
	move := func(id string, to ...string) {
		for _, st := range to {
			args := map[string]any{"task_id": id, "status": st}
			if st == "blocked" {
				args["blocked_reason"] = "Finance has not confirmed whether invoices round half-even"
			}
			ok(t, agent, "task_update", args)
		}
	}
	s := sampleWork{Project: p}
	s.Parent = taskID(t, agent, map[string]any{"title": "Accept card payments", "project": p, "priority": "high", "labels": []string{"payments", "api"},
		"description": sampleDescription, "estimate_hours": 16})
	s.Luhn = taskID(t, agent, map[string]any{"title": "Validate card numbers (Luhn)", "project": p, "parent_id": s.Parent, "labels": []string{"payments"}})
	s.Intent = taskID(t, agent, map[string]any{"title": "Store payment intents with the order", "project": p, "parent_id": s.Parent, "labels": []string{"payments", "db"}})
	retry := taskID(t, agent, map[string]any{"title": "Retry failed provider webhooks", "project": p, "depends_on": []string{s.Intent}, "labels": []string{"reliability"}})
	s.Blocked = taskID(t, agent, map[string]any{"title": "Cart and invoice round currency differently", "project": p, "priority": "critical", "labels": []string{"bug", "money"}})
	s.Review = taskID(t, agent, map[string]any{"title": "Checkout page takes over 2 s on mobile", "project": p, "labels": []string{"perf", "frontend"}})
	taskID(t, agent, map[string]any{"title": "Refund a captured payment", "project": p, "labels": []string{"payments"}, "depends_on": []string{s.Parent}})
	taskID(t, agent, map[string]any{"title": "Tax per shipping region", "project": p, "priority": "low"})
	apple := taskID(t, agent, map[string]any{"title": "Add Apple Pay", "project": p, "priority": "low"})
	addr := taskID(t, agent, map[string]any{"title": "Address autocomplete", "project": p})

	move(s.Luhn, "todo", "in_progress", "review", "done")
	move(addr, "todo", "in_progress", "review", "done")
	move(s.Parent, "todo", "in_progress")
	ok(t, agent, "task_update", map[string]any{"task_id": s.Parent, "assignee": "agent-a", "progress": 45})
	move(s.Intent, "todo", "in_progress")
	ok(t, agent, "task_update", map[string]any{"task_id": s.Intent, "assignee": "agent-b", "progress": 20})
	move(retry, "todo")
	move(s.Blocked, "todo", "blocked")
	move(s.Review, "todo", "in_progress", "review")
	ok(t, agent, "task_update", map[string]any{"task_id": s.Review, "assignee": "agent-c", "progress": 90})
	move(apple, "cancelled")

	for _, th := range []map[string]any{
		{"type": "decision", "content": "Use payment intents, not charges: they survive 3-D Secure redirects.", "branch": "payments", "commit_sha": "4f2a9c1"},
		{"type": "discovery", "content": "The provider sends `payment_intent.succeeded` **before** the redirect returns about 1 time in 20.", "branch": "payments"},
		{"type": "decision", "content": "Confirm orders on the webhook only; the redirect just shows *pending*.", "branch": "payments", "commit_sha": "9b07e3d", "tests_run": []string{"TestConfirmOnWebhook", "TestRedirectPending"}},
	} {
		th["task_id"] = s.Parent
		ok(t, agent, "thought_record", th)
	}
	ok(t, agent, "thought_record", map[string]any{"task_id": s.Luhn, "type": "decision", "content": "Luhn in the browser and again on the server.", "commit_sha": "1c44d20", "tests_run": []string{"TestLuhn"}})
	s.Sealed = ok(t, agent, "audit_session_start", map[string]any{"task_id": s.Luhn, "auditor_id": "reviewer", "reason": "release 1.4"})["session_id"].(string)
	ok(t, agent, "merkle_finalize", map[string]any{"session_id": s.Sealed})
	s.OpenAudit = ok(t, agent, "audit_session_start", map[string]any{"task_id": s.Parent, "auditor_id": "reviewer", "scope": "deep", "reason": "payments go live"})["session_id"].(string)
	return s
}

// newBrowser starts a headless Chromium with a fixed 1280×800 viewport, or
// skips the test when none is found. The returned counter counts the
// JavaScript dialogs any page opened (an alert is a script that ran).
func newBrowser(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	chrome := chromiumPath()
	if chrome == "" {
		t.Skip("no chromium binary found (apt-get install chromium); the dashboard's browser test cannot run")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// The Chromium of the day may send protocol values this cdproto does
	// not know; those decode errors are noise for these tests.
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	dialogs := &atomic.Int32{}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, isDialog := ev.(*page.EventJavascriptDialogOpening); isDialog {
			dialogs.Add(1)
			t.Errorf("a page opened a dialog: %q", e.Message)
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	return ctx, dialogs
}
