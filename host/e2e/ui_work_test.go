package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hostileDescription is a task description written to run script in the
// page that shows it: an HTML block, an inline element with a handler and
// a javascript: link.
const hostileDescription = "Steps to reproduce:\n\n<script>window.pwned = 1; alert(1)</script>\n\n" +
	"See <img src=x onerror=\"window.pwned = 2; alert(2)\"> and [the log](javascript:window.pwned=3;alert(3)), then **retry**."

// TestUIOpensOnTheWork runs `cairn ui` in a repository whose agents filed
// their tasks under another project than the workspace's slug (D24): the
// first page shows those tasks (docs/decisions.md D25). Then the task page
// renders a hostile description as text, with nothing that runs, and an
// open audit session's page says it is open, with no root and no score.
func TestUIOpensOnTheWork(t *testing.T) {
	w := newWorkspace(t)
	// No CAIRN_PROJECT: the session's project is the workspace's slug,
	// which holds no task.
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	work := seedSampleWork(t, w, env, agent)
	hostile := taskID(t, agent, map[string]any{"title": "Crash on retry", "project": work.Project, "labels": []string{"bug", "<b>x</b>"}, "description": hostileDescription})
	openRoot := ok(t, agent, "merkle_root", map[string]any{"session_id": work.OpenAudit})["merkle_root"].(string)

	ctx, dialogs := newBrowser(t)
	login := uiURL(t, w, env)
	base := login[:strings.Index(login, "/login")]

	t.Run("lands on the project with the work", func(t *testing.T) {
		var loc, notice string
		var cards int
		// The columns load one request each: count the cards once the
		// board says its first load finished, not at the first card.
		if err := chromedp.Run(ctx, chromedp.Navigate(login), chromedp.WaitVisible(fmt.Sprintf(`.card[data-task=%q]`, work.Parent), chromedp.ByQuery),
			chromedp.WaitVisible(`#board[data-first-render-ms]`, chromedp.ByQuery),
			chromedp.Evaluate(`location.pathname + location.search`, &loc), chromedp.Evaluate(`document.querySelectorAll('.card').length`, &cards),
			chromedp.Text(`[data-landing]`, &notice, chromedp.ByQuery)); err != nil {
			t.Fatalf("the first page does not show the checkout project's tasks: %v", err)
		}
		u, _ := url.Parse(loc)
		if u.Path != "/board" || u.Query().Get("project") != work.Project || u.Query().Get("from") == "" {
			t.Errorf("landed on %s, want the board of %s, naming the session's empty project", loc, work.Project)
		}
		if cards < 10 || !strings.Contains(notice, "has no tasks yet") || !strings.Contains(notice, work.Project) {
			t.Errorf("%d cards, notice %q", cards, notice)
		}
	})

	t.Run("task page renders Markdown inert", func(t *testing.T) {
		var page struct {
			Description string   `json:"description"`
			Handlers    []string `json:"handlers"`
			Links       []string `json:"links"`
			Scripts     []string `json:"scripts"`
			Images      int      `json:"images"`
			Pwned       bool     `json:"pwned"`
			Fields      []string `json:"fields"`
			Chips       []string `json:"chips"`
		}
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+hostile), chromedp.WaitVisible(`[data-description]`, chromedp.ByQuery),
			chromedp.Evaluate(`({
				description: document.querySelector('[data-description]').innerText,
				handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => e.tagName + ' ' + a.name)),
				links: [...document.querySelectorAll('[href], [src], [action], [formaction]')].map((e) => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action') || e.getAttribute('formaction') || '').filter((u) => /^\s*(javascript|vbscript|data):/i.test(u)),
				scripts: [...document.scripts].map((s) => s.getAttribute('src') || 'inline'),
				images: document.querySelectorAll('main img').length,
				pwned: window.pwned !== undefined,
				fields: [...document.querySelectorAll('dl.fields dt')].map((e) => e.innerText),
				chips: [...document.querySelectorAll('ul.chips li')].map((e) => e.innerText),
			})`, &page)); err != nil {
			t.Fatalf("task page: %v", err)
		}
		for _, want := range []string{"<script>window.pwned = 1; alert(1)</script>", `<img src=x onerror="window.pwned = 2; alert(2)">`, "the log"} {
			if !strings.Contains(page.Description, want) {
				t.Errorf("the description does not show %q as text: %q", want, page.Description)
			}
		}
		if len(page.Handlers) > 0 || len(page.Links) > 0 || page.Images > 0 || page.Pwned || dialogs.Load() > 0 {
			t.Errorf("something in the task page could run: handlers %v, links %v, images %d, pwned %v, dialogs %d", page.Handlers, page.Links, page.Images, page.Pwned, dialogs.Load())
		}
		if len(page.Scripts) != 1 || page.Scripts[0] != "/assets/app.js" {
			t.Errorf("scripts in the page: %v, want only /assets/app.js", page.Scripts)
		}
		if got := strings.Join(page.Fields, ","); !strings.HasPrefix(got, "Status,Priority,Assignee,Progress,Labels") {
			t.Errorf("fields %q, want Status, Priority, Assignee, Progress, Labels first", got)
		}
		if got := strings.Join(page.Chips, "|"); got != "bug|<b>x</b>" {
			t.Errorf("label chips %q, want bug and <b>x</b> as text", got)
		}
	})

	t.Run("task page links sub-tasks and dependencies", func(t *testing.T) {
		var refs map[string]string
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+work.Parent), chromedp.WaitVisible(`[data-description] table`, chromedp.ByQuery),
			chromedp.Evaluate(`({subs: [...document.querySelectorAll('#sub-h ~ ul.refs a')].map((a) => a.getAttribute('href')).join(' '),
				waiting: [...document.querySelectorAll('#dep-h ~ ul.refs a')].map((a) => a.getAttribute('href')).join(' '),
				heading: document.querySelector('[data-description] h2').innerText})`, &refs)); err != nil {
			t.Fatalf("task page: %v", err)
		}
		if !strings.Contains(refs["subs"], "/task/"+work.Luhn) || !strings.Contains(refs["subs"], "/task/"+work.Intent) || refs["heading"] != "Plan" || refs["waiting"] == "" {
			t.Errorf("sub-tasks, dependents and the rendered description: %v", refs)
		}
	})

	// A browser holds six connections per origin and each page holds a
	// live stream: a page left behind must end its stream, or the seventh
	// page waits for the server to notice (56.8 s measured before the fix).
	// The bound detects that wait, not speed: a slow machine loads a page
	// in well under it.
	t.Run("page after page loads at once", func(t *testing.T) {
		n := 0
		for range 4 {
			for _, p := range []string{"/board", "/task/" + work.Parent, "/audits", "/sdd", "/system"} {
				wait, cancel := context.WithTimeout(ctx, 20*time.Second)
				err := chromedp.Run(wait, chromedp.Navigate(base+p), chromedp.WaitVisible(`#live.on`, chromedp.ByQuery), chromedp.WaitVisible(`main h1, #board .card`, chromedp.ByQuery))
				cancel()
				n++
				if err != nil {
					t.Fatalf("page %d of the run (%s) did not load within 20 s (a stream left open?): %v", n, p, err)
				}
			}
		}
	})

	t.Run("an open audit session is not shown as sealed", func(t *testing.T) {
		var state, main, row string
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/audits/"+work.OpenAudit), chromedp.WaitVisible(`[data-state]`, chromedp.ByQuery),
			chromedp.Text(`[data-state]`, &state, chromedp.ByQuery), chromedp.Text(`main`, &main, chromedp.ByQuery),
			chromedp.Navigate(base+"/audits"), chromedp.WaitVisible(fmt.Sprintf(`tr[data-session=%q]`, work.OpenAudit), chromedp.ByQuery),
			chromedp.Text(fmt.Sprintf(`tr[data-session=%q]`, work.OpenAudit), &row, chromedp.ByQuery)); err != nil {
			t.Fatalf("audit pages: %v", err)
		}
		if !strings.Contains(state, "open") || !strings.Contains(state, "records so far") || !strings.Contains(state, "finalizing") {
			t.Errorf("the open session's state reads %q", state)
		}
		for _, page := range []string{main, row} {
			if strings.Contains(page, "%") || strings.Contains(page, openRoot[:12]) {
				t.Errorf("an open session shows a score or its root: %q", page)
			}
		}
		if !strings.Contains(row, "open") || !strings.Contains(row, "not sealed") {
			t.Errorf("the audits page's row of the open session: %q", row)
		}
	})
}
