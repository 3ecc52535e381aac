package ui

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// getPage fetches a view with a logged-in client and returns its body.
func getPage(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(b)
}

// taskBackend answers the task page's tools for T-1, with a hostile
// description, T-2 it waits on and T-3 its sub-task.
type taskBackend struct{ *recorder }

func (b taskBackend) Call(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	var in struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(args, &in)
	out := ""
	switch {
	case name == "task_get" && in.TaskID == "T-1":
		out = `{"task_id":"T-1","title":"Parse numbers","status":"in_progress","priority":"high","assignee":"agent-a","progress":40,
			"labels":["parser","good first issue"],"project":"board","created_at":"2026-11-20T10:00:00Z","created_by":"alice",
			"updated_at":"2026-11-21T11:30:00Z","updated_by":"agent-a","depends_on":["T-2"],"dependents":["T-3"],
			"source":{"id":"42.3","format":"taskmaster","updated_at":"2026-01-02T03:04:00Z"},
			"description":"## Plan\n\n<script>alert(1)</script>\n\nSee <img src=x onerror=alert(2)> and [this](javascript:alert(3))."}`
	case name == "task_get":
		out = `{"task_id":"` + in.TaskID + `","title":"Task ` + in.TaskID + `","status":"done"}`
	case name == "thought_record_list":
		out = `{"thoughts":[{"thought_id":"Θ-1","task_id":"T-1","type":"decision","content":"traced","hash":"` + strings.Repeat("ab", 32) + `",
			"recorded_at":"2026-11-21T11:00:00Z","recorded_by":"agent-a","chain_position":1,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}]}`
	case name == "audit_verify_chain":
		out = `{"chain_valid":true,"total_records":1,"verified_records":1,"integrity_score":100,"trace":[{"chain":"event","task_id":"T-1","position":1,
			"record_id":"T-1/event/1","stored_hash":"` + strings.Repeat("cd", 32) + `","recomputed_hash":"` + strings.Repeat("cd", 32) + `","verdict":"verified","trace_id":"0af7651916cd43dd8448eb211c80319c"}]}`
	default:
		return b.recorder.Call(ctx, name, args, c)
	}
	return &seam.Result{Output: json.RawMessage(out)}
}

// The task page reads like a page: fields in words and in order, labels as
// chips, the description rendered and inert, related tasks linked.
func TestTaskPageReadsLikeAPage(t *testing.T) {
	s, err := Start(taskBackend{newRecorder()}, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	body := getPage(t, login(t, s, Grant{Person: "alice"}), base(s)+"/view/task/T-1")
	order := []string{"<dt>Status</dt>", "In progress", "<dt>Priority</dt>", "<dt>Assignee</dt>", "@agent-a", "<dt>Progress</dt>", "<dt>Labels</dt>",
		`<li class="label">parser</li>`, `<li class="label">good first issue</li>`, `id="desc-h">Description`, "<h2>Plan</h2>",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;", `<a href="">this</a>`,
		`id="dep-h">Dependencies`, `<a href="/task/T-2">T-2</a> Task T-2`, `id="sub-h">Sub-tasks`, `<a href="/task/T-3">T-3</a> Task T-3`,
		"<dt>Project</dt>", `<a href="/board?project=board">board</a>`, "<dt>Created</dt>", "2026-11-20 10:00 UTC</time> by alice", "<dt>Updated</dt>",
		"<dt>Imported from</dt>", "<code data-source-id>42.3</code> of taskmaster, updated there", "2026-01-02 03:04 UTC</time>"}
	at := 0
	for _, want := range order {
		i := strings.Index(body[at:], want)
		if i < 0 {
			t.Fatalf("task page lacks %q after position %d:\n%s", want, at, body)
		}
		at += i + len(want)
	}
	if bad := activeParts(body[strings.Index(body, "<main"):]); len(bad) > 0 {
		t.Errorf("the task page holds %q", bad)
	}
	// A thought or task event recorded by a traced call names its trace
	// (D38).
	for _, id := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"} {
		if !strings.Contains(body, `data-trace-id="`+id+`"`) {
			t.Errorf("the task page does not show trace id %s", id)
		}
	}
	for _, dt := range strings.Split(body, "<dt>")[1:] {
		if name := dt[:strings.Index(dt, "</dt>")]; strings.Contains(name, "_") {
			t.Errorf("a field is named by its key: %q", name)
		}
	}
}
