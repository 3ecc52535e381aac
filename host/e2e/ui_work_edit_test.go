package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// seedGraphProject registers project and files n tasks in layers of 20:
// each task after the first 20 waits on one or two tasks of the layer
// before, so the graph has depth n/20 and crossing edges. The first 60 are
// done, the next 20 in progress or review, one blocked; the rest wait in
// todo and backlog. Tasks move in number order, so a task's dependencies
// are done before it starts.
func seedGraphProject(t *testing.T, w *workspace, env []string, agent *session, project string, n int) []string {
	t.Helper()
	if code, _, errOut := runCairn(t, w, "", env, "project", "add", project); code != 0 {
		t.Fatalf("project add %s: %s", project, errOut)
	}
	subjects := []string{"cart totals", "card payments", "refunds", "invoices", "tax rules", "shipping rates", "coupons", "stock holds", "order emails", "webhooks"}
	verbs := []string{"Design", "Build", "Test", "Document", "Review", "Ship"}
	ids := make([]string, 0, n)
	for i := range n {
		args := map[string]any{"title": fmt.Sprintf("%s %s (%d)", verbs[(i/20)%len(verbs)], subjects[i%len(subjects)], i+1), "project": project}
		if i >= 20 {
			deps := []string{ids[i-20+(i%7)]}
			if i%3 == 0 {
				deps = append(deps, ids[i-13])
			}
			args["depends_on"] = deps
		}
		ids = append(ids, taskID(t, agent, args))
	}
	move := func(id string, to ...string) {
		for _, st := range to {
			args := map[string]any{"task_id": id, "status": st}
			if st == "blocked" {
				args["blocked_reason"] = "waits on the provider's sandbox keys"
			}
			ok(t, agent, "task_update", args)
		}
	}
	for i, id := range ids {
		switch {
		case i < 60:
			move(id, "todo", "in_progress", "review", "done")
		case i < 70:
			move(id, "todo", "in_progress")
		case i < 79:
			move(id, "todo", "in_progress", "review")
		case i == 79:
			move(id, "todo", "blocked")
		case i%2 == 0:
			move(id, "todo")
		}
	}
	return ids
}

// TestUIWorkEdit drives the dashboard's forms and pictures in Chromium
// (docs/decisions.md D45): a person creates a task on the board and edits
// it on its page, each a link of the task's chain with the person as its
// actor; a refused field shows its refusal beside it; the dependency graph
// of 200 tasks draws every label apart from every other, the longest open
// path marked; the burn-up counts what task_list counts; a read-only login
// gets no forms and is told `cairn ui --allow-actions`.
func TestUIWorkEdit(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })
	agent := w.serve(append(env, "CAIRN_AGENT_ID=agent-a")...)
	if code, _, errOut := runCairn(t, w, "", env, "project", "add", "shop"); code != 0 {
		t.Fatalf("project add shop: %s", errOut)
	}
	first := taskID(t, agent, map[string]any{"title": "Design the cart", "project": "shop"})

	ctx, _ := newBrowser(t)
	login := uiURL(t, w, env, "--allow-actions")
	base := login[:strings.Index(login, "/login")]
	art := artifactDir(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(login), chromedp.WaitVisible(`#board`, chromedp.ByQuery)); err != nil {
		t.Fatalf("login: %v", err)
	}
	eventLinks := func(id string) int {
		tr := ok(t, agent, "audit_verify_chain", map[string]any{"task_id": id, "full_trace": true})["trace"].([]any)
		n := 0
		for _, l := range tr {
			if c, _ := l.(map[string]any)["chain"].(string); c == "event" || c == "events" {
				n++
			}
		}
		return n
	}

	var created string
	t.Run("a person creates a task on the board", func(t *testing.T) {
		var loc string
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/board?project=shop"), chromedp.WaitVisible(`details[data-new-task] summary`, chromedp.ByQuery),
			chromedp.Click(`details[data-new-task] summary`, chromedp.ByQuery),
			chromedp.SendKeys(`form[data-form=create] [name=title]`, "Show the cart's total with tax", chromedp.ByQuery),
			chromedp.SetValue(`form[data-form=create] [name=priority]`, "high", chromedp.ByQuery),
			chromedp.SendKeys(`form[data-form=create] [name=labels]`, "ui, money", chromedp.ByQuery),
			chromedp.SendKeys(`form[data-form=create] [name=depends_on]`, first, chromedp.ByQuery),
			chromedp.SendKeys(`form[data-form=create] [name=description]`, "The total **includes** tax.", chromedp.ByQuery),
			chromedp.Click(`form[data-form=create] button[type=submit]`, chromedp.ByQuery),
			chromedp.WaitVisible(`article.task form[data-form=edit]`, chromedp.ByQuery),
			chromedp.Evaluate(`location.pathname`, &loc)); err != nil {
			t.Fatalf("the new-task form: %v", err)
		}
		created = strings.TrimPrefix(loc, "/task/")
		got := ok(t, agent, "task_get", map[string]any{"task_id": created})
		if got["title"] != "Show the cart's total with tax" || got["priority"] != "high" || got["created_by"] != "alice" || got["project"] != "shop" ||
			fmt.Sprint(got["labels"]) != "[ui money]" || fmt.Sprint(got["depends_on"]) != "["+first+"]" || got["description"] != "The total **includes** tax." {
			t.Fatalf("the form created %v", got)
		}
		if n := eventLinks(created); n != 1 {
			t.Errorf("%d event links after the creation, want 1 (task_created)", n)
		}
	})
	if created == "" {
		t.FailNow()
	}

	t.Run("a person edits the task on its page", func(t *testing.T) {
		before := eventLinks(created)
		var result string
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/task/"+created), chromedp.WaitVisible(`form[data-form=edit]`, chromedp.ByQuery),
			chromedp.SetValue(`form[data-form=edit] [name=title]`, "Show the total with tax", chromedp.ByQuery),
			chromedp.SetValue(`form[data-form=edit] [name=status]`, "todo", chromedp.ByQuery),
			chromedp.SetValue(`form[data-form=edit] [name=priority]`, "critical", chromedp.ByQuery),
			chromedp.SetValue(`form[data-form=edit] [name=labels]`, "ui, money, tax", chromedp.ByQuery),
			chromedp.Click(`form[data-form=edit] button[type=submit]`, chromedp.ByQuery),
			chromedp.WaitVisible(`form[data-form=edit][data-saved]`, chromedp.ByQuery),
			chromedp.Text(`form[data-form=edit] .result`, &result, chromedp.ByQuery)); err != nil {
			t.Fatalf("the edit form: %v", err)
		}
		got := ok(t, agent, "task_get", map[string]any{"task_id": created})
		if got["title"] != "Show the total with tax" || got["status"] != "todo" || got["priority"] != "critical" || fmt.Sprint(got["labels"]) != "[ui money tax]" || got["updated_by"] != "alice" {
			t.Fatalf("after the edit (%q): %v", result, got)
		}
		if got["description"] != "The total **includes** tax." || fmt.Sprint(got["depends_on"]) != "["+first+"]" {
			t.Errorf("fields the person left alone changed: %v", got)
		}
		if n := eventLinks(created); n != before+1 {
			t.Errorf("%d event links after one edit, want %d: the edit is one link", n, before+1)
		}
		// The page shows the edit once the live stream refreshes it.
		if err := chromedp.Run(ctx, chromedp.WaitVisible(`[data-field=priority] .prio-critical`, chromedp.ByQuery)); err != nil {
			t.Errorf("the page does not show the new priority: %v", err)
		}
		screenshot(t, ctx, art, "edit")
	})

	t.Run("a refusal shows beside the field it names", func(t *testing.T) {
		for _, c := range []struct {
			form, field, value, want string
		}{
			{"edit", "status", "blocked", "blocked_reason"}, // no reason given: the core area refuses
			{"edit", "depends_on", "T-9999", "depends_on"},  // no such task: the core area refuses
			{"create", "depends_on", "later", "depends_on"}, // not a task id: the dashboard refuses
		} {
			page := base + "/task/" + created
			if c.form == "create" {
				page = base + "/board?project=shop"
			}
			sel := fmt.Sprintf(`form[data-form=%s]`, c.form)
			actions := []chromedp.Action{chromedp.Navigate(page), chromedp.WaitVisible(sel, chromedp.ByQuery)}
			if c.form == "create" {
				actions = append(actions, chromedp.Click(`details[data-new-task] summary`, chromedp.ByQuery), chromedp.SendKeys(sel+` [name=title]`, "x", chromedp.ByQuery))
			}
			var msg, invalid string
			actions = append(actions, chromedp.SetValue(sel+` [name=`+c.field+`]`, c.value, chromedp.ByQuery),
				chromedp.Click(sel+` button[type=submit]`, chromedp.ByQuery),
				chromedp.WaitVisible(fmt.Sprintf(`%s[data-refused=%q]`, sel, c.want), chromedp.ByQuery),
				chromedp.Text(fmt.Sprintf(`%s [data-error-for=%q]`, sel, c.want), &msg, chromedp.ByQuery),
				chromedp.Evaluate(fmt.Sprintf(`document.querySelector('%s [name=%s]').getAttribute('aria-invalid') || ''`, sel, c.want), &invalid))
			if err := chromedp.Run(ctx, actions...); err != nil {
				t.Fatalf("%s %s=%s: no refusal beside %s: %v", c.form, c.field, c.value, c.want, err)
			}
			if msg == "" || invalid != "true" {
				t.Errorf("%s %s=%s: refusal %q, aria-invalid %q", c.form, c.field, c.value, msg, invalid)
			}
			t.Logf("%s %s=%s → beside %s: %s", c.form, c.field, c.value, c.want, msg)
		}
		if got := ok(t, agent, "task_get", map[string]any{"task_id": created}); got["status"] != "todo" {
			t.Errorf("a refused edit changed the task: %v", got)
		}
	})

	t.Run("the dependency graph of 200 tasks reads", func(t *testing.T) {
		ids := seedGraphProject(t, w, env, agent, "big", 200)
		var g struct {
			Nodes    int      `json:"nodes"`
			Edges    int      `json:"edges"`
			Overlaps []string `json:"overlaps"`
			Outside  []string `json:"outside"`
			Longest  []string `json:"longest"`
			Marked   []string `json:"marked"`
			Href     string   `json:"href"`
			Done     int      `json:"done"`
			ViewMs   float64  `json:"view_ms"`
		}
		// Measured in the browser: each label's drawn box lies inside its
		// task's box, and no two labels' boxes meet.
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/graph?project=big"), chromedp.WaitVisible(`svg[data-graph]`, chromedp.ByQuery),
			chromedp.Evaluate(`(() => {
				const nodes = [...document.querySelectorAll('svg[data-graph] a.g-node')];
				const boxes = nodes.map((a) => ({id: a.dataset.task, t: a.querySelector('text').getBBox(), r: a.querySelector('rect').getBBox()}));
				const outside = boxes.filter((b) => b.t.x < b.r.x || b.t.y < b.r.y || b.t.x + b.t.width > b.r.x + b.r.width || b.t.y + b.t.height > b.r.y + b.r.height).map((b) => b.id);
				const overlaps = [];
				for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
					const a = boxes[i].t, b = boxes[j].t;
					if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) overlaps.push(boxes[i].id + '/' + boxes[j].id);
				}
				return {nodes: nodes.length, edges: document.querySelectorAll('svg[data-graph] path.g-edge').length, overlaps, outside,
					longest: [...document.querySelectorAll('[data-longest] li > a')].map((a) => a.textContent),
					marked: [...document.querySelectorAll('path.g-edge.on-path')].map((p) => p.dataset.from + '>' + p.dataset.to),
					href: nodes[0].getAttribute('href'), done: document.querySelectorAll('a.g-node.status-done').length,
					view_ms: Math.max(0, ...performance.getEntriesByType('resource').filter((e) => e.name.includes('/view/graph')).map((e) => e.duration))};
			})()`, &g)); err != nil {
			t.Fatalf("graph page: %v", err)
		}
		wantEdges := 0
		for i := 20; i < 200; i++ {
			wantEdges += 1 + map[bool]int{true: 1}[i%3 == 0]
		}
		if g.Nodes != 200 || g.Edges != wantEdges || g.Done != 60 {
			t.Errorf("%d nodes, %d edges, %d done; want 200, %d, 60", g.Nodes, g.Edges, g.Done, wantEdges)
		}
		if len(g.Overlaps) > 0 || len(g.Outside) > 0 {
			t.Errorf("labels overlap %v; labels outside their box %v", g.Overlaps, g.Outside)
		}
		if !strings.HasPrefix(g.Href, "/task/T-") {
			t.Errorf("a node links to %q, want its task page", g.Href)
		}
		// The path is a chain of open tasks along drawn edges, all marked.
		if len(g.Longest) < 5 || len(g.Marked) != len(g.Longest)-1 {
			t.Fatalf("longest open path %v, marked edges %v", g.Longest, g.Marked)
		}
		for i := 1; i < len(g.Longest); i++ {
			if e := g.Longest[i-1] + ">" + g.Longest[i]; !slices.Contains(g.Marked, e) {
				t.Errorf("the path's step %s is not a marked edge (%v)", e, g.Marked)
			}
		}
		for _, id := range g.Longest {
			if st := ok(t, agent, "task_get", map[string]any{"task_id": id})["status"]; st == "done" || st == "cancelled" {
				t.Errorf("%s on the open path is %s", id, st)
			}
		}
		if !slices.Contains(ids, g.Longest[0]) {
			t.Errorf("the path starts at %s, not a task of the project", g.Longest[0])
		}
		t.Logf("200 tasks, %d edges, page served in %.0f ms; longest open path %d tasks: %v", g.Edges, g.ViewMs, len(g.Longest), g.Longest)
		screenshot(t, ctx, art, "graph")
	})

	t.Run("the burn-up counts what task_list counts", func(t *testing.T) {
		var scope, done, open string
		var lines int
		if err := chromedp.Run(ctx, chromedp.Navigate(base+"/burnup?project=big"), chromedp.WaitVisible(`svg[data-burnup]`, chromedp.ByQuery),
			chromedp.Text(`[data-scope]`, &scope, chromedp.ByQuery), chromedp.Text(`[data-done]`, &done, chromedp.ByQuery), chromedp.Text(`[data-open]`, &open, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('svg[data-burnup] polyline.b-scope, svg[data-burnup] polyline.b-done').length`, &lines)); err != nil {
			t.Fatalf("burn-up page: %v", err)
		}
		total := ok(t, agent, "task_list", map[string]any{"project": "big", "limit": 1})["total_count"].(float64)
		doneN := ok(t, agent, "task_list", map[string]any{"project": "big", "status": []string{"done"}, "limit": 1})["total_count"].(float64)
		if scope != fmt.Sprint(total) || done != fmt.Sprint(doneN) || open != fmt.Sprint(total-doneN) || lines != 2 {
			t.Errorf("burn-up scope %s done %s open %s, %d lines; task_list: %v tasks, %v done", scope, done, open, lines, total, doneN)
		}
		screenshot(t, ctx, art, "burnup")
	})

	t.Run("a read-only login gets no forms and is told the switch", func(t *testing.T) {
		reader := uiURL(t, w, env)
		var forms int
		var note string
		if err := chromedp.Run(ctx, chromedp.Navigate(reader), chromedp.WaitVisible(`#board`, chromedp.ByQuery),
			chromedp.Navigate(base+"/task/"+created), chromedp.WaitVisible(`[data-read-only]`, chromedp.ByQuery),
			chromedp.Text(`[data-read-only]`, &note, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('form[data-form], form[data-action]').length`, &forms)); err != nil {
			t.Fatalf("read-only task page: %v", err)
		}
		if forms != 0 || !strings.Contains(note, "cairn ui --allow-actions") {
			t.Errorf("read-only page: %d forms, note %q", forms, note)
		}
		c := loggedInClient(t, uiURL(t, w, env))
		for _, p := range []struct{ path, body string }{
			{"/api/tasks", `{"title":"sneaky"}`},
			{"/api/task/" + created + "/edit", `{"priority":"low"}`},
		} {
			req, _ := http.NewRequest("POST", base+p.path, strings.NewReader(p.body))
			req.Header.Set("Origin", base)
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.NewDecoder(res.Body).Decode(&out)
			res.Body.Close()
			if res.StatusCode != 403 || !strings.Contains(out.Error.Message, "cairn ui --allow-actions") || strings.Contains(out.Error.Message, "CAIRN_MODE") {
				t.Errorf("read-only %s: %d %q, want 403 naming `cairn ui --allow-actions` and not CAIRN_MODE", p.path, res.StatusCode, out.Error.Message)
			}
		}
		if n := ok(t, agent, "task_list", map[string]any{"project": "shop", "search": "sneaky"})["total_count"].(float64); n != 0 {
			t.Errorf("a read-only login created %v tasks", n)
		}
	})
}
