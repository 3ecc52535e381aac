package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// toolCall is one call a command made.
type toolCall struct {
	Tool string
	Args obj
}

// taskFake answers the task commands' calls with canned outputs and
// records them; its default project is "ws".
type taskFake struct {
	answers map[string]string
	calls   []toolCall
}

func (f *taskFake) Call(_ context.Context, tool string, args any, out any) (json.RawMessage, error) {
	raw, _ := json.Marshal(args)
	var a obj
	_ = json.Unmarshal(raw, &a)
	f.calls = append(f.calls, toolCall{tool, a})
	ans, ok := f.answers[tool]
	if !ok {
		ans = `{}`
	}
	if out != nil {
		if err := json.Unmarshal([]byte(ans), out); err != nil {
			return nil, err
		}
	}
	return json.RawMessage(ans), nil
}

func (f *taskFake) Close() {}

func (f *taskFake) defaultProject() string { return "ws" }

// taskAnswers are outputs in the tools' shapes (their output schemas).
var taskAnswers = map[string]string{
	"task_list": `{"tasks":[
		{"task_id":"T-2","title":"Claimed one","project":"ws","status":"in_progress","priority":"high","progress":10,"assignee":"operator:ann","created_at":"2026-01-02T00:00:00.000Z","updated_at":"2026-01-03T00:00:00.000Z"},
		{"task_id":"T-1","title":"A title\twith a tab","project":"ws","status":"todo","priority":"normal","progress":0,"assignee":"unassigned","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}],
		"total_count":5,"returned_count":2,"offset":0,"limit":2}`,
	"task_get": `{"task_id":"T-2","title":"Claimed one","description":"first line\nsecond line","project":"ws","status":"in_progress",
		"priority":"high","progress":10,"assignee":"operator:ann","labels":["a","b"],"created_at":"2026-01-02T00:00:00.000Z",
		"updated_at":"2026-01-03T00:00:00.000Z","created_by":"operator:ann","updated_by":"operator:ann",
		"thought_trail":["Θ-1","Θ-2"],"dependents":[],"depends_on":["T-1"],"depended_on_by":[],"claimed_by":"operator:ann",
		"source":{"format":"taskmaster","id":"42.3","created_at":"2025-06-01T10:00:00Z"}}`,
	"task_create":       `{"task_id":"T-3","status":"backlog","created_at":"2026-01-04T00:00:00.000Z","created_by":"operator:ann","sequence":3}`,
	"task_update":       `{"task_id":"T-3","status":"in_progress","progress":0,"updated_at":"2026-01-05T00:00:00.000Z","updated_by":"operator:ann","previous_status":"todo","claimed_by":"operator:ann","warnings":["mind this"]}`,
	"task_next_actions": `{"next_actions":[{"task_id":"T-1","title":"Ready","priority":"high","assignee":"unassigned","dependencies_unmet":0},{"task_id":"T-4","title":"Parent","priority":"normal","assignee":"unassigned","dependencies_unmet":2}],"count":2,"project":"ws","blocked":[{"task_id":"T-5","title":"Waits","blocked_reason":"waiting on T-1","waiting_on":["T-1"]},{"task_id":"T-6","title":"Stuck","blocked_reason":"no access"}]}`,
	"thought_record":    `{"thought_id":"Θ-3","task_id":"T-3","type":"decision","hash":"ab12","previous_hash":null,"recorded_at":"2026-01-06T00:00:00.000Z","recorded_by":"operator:ann","chain_position":3}`,
}

// runTask runs `task args…` against a fake area.
func runTask(t *testing.T, args ...string) (*taskFake, string, error) {
	t.Helper()
	fake := &taskFake{answers: taskAnswers}
	f := &areaFlags{}
	b := taskBuilder(f)
	b.Runtime.Connect = func(*cobra.Command, bool) (toolcmd.Conn, error) { return fake, nil }
	root := &cobra.Command{Use: "cairn", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(taskCommand(b, f))
	strictUsage(root)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"task"}, args...))
	err := root.Execute()
	return fake, out.String(), err
}

// Each verb calls its tool with the arguments its command line names, and
// prints a table a person reads (or the tool's output with --json).
func TestTaskCommandsCallTheirTools(t *testing.T) {
	t.Parallel()
	get := func(id string) toolCall { return toolCall{"task_get", obj{"task_id": id}} }
	for _, c := range []struct {
		args  []string
		calls []toolCall
		out   []string // lines of the output, spaces squeezed
	}{
		{[]string{"list"}, []toolCall{{"task_list", obj{}}, get("T-2")}, []string{
			"ID STATUS PRIORITY TITLE ASSIGNEE CLAIMED",
			"T-2 in_progress high Claimed one operator:ann operator:ann",
			"T-1 todo normal A title with a tab unassigned -",
			"1–2 of 5 tasks; --offset 2 shows the next page"}},
		{[]string{"list", "--status", "todo,in_progress", "--priority", "high", "--label", "x", "--limit", "2", "--search", "import"},
			[]toolCall{{"task_list", obj{"status": []any{"todo", "in_progress"}, "priority": []any{"high"}, "label": "x", "limit": 2.0, "search": "import"}}, get("T-2")}, nil},
		{[]string{"list", "--json"}, []toolCall{{"task_list", obj{}}}, []string{`"total_count": 5`}},
		{[]string{"show", "12"}, []toolCall{{"task_get", obj{"task_id": "T-12", "include_thought_trail": true, "include_dependents": true}}}, []string{
			"task_id T-2", "status in_progress", "claimed_by operator:ann", "labels a,b", "depends_on T-1", "depended_on_by -",
			"trail 2 thoughts", "source.created_at 2025-06-01T10:00:00Z", "source.format taskmaster", "source.id 42.3",
			"description:", "first line", "second line"}},
		{[]string{"add", "Fix it", "--priority", "high", "--label", "a", "--labels", "b", "--depends-on", "T-1"},
			[]toolCall{{"project_register", obj{"slug": "ws"}}, {"task_create", obj{"title": "Fix it", "priority": "high", "labels": []any{"a", "b"}, "depends_on": []any{"T-1"}, "project": "ws"}}},
			[]string{"added T-3 to project ws: backlog, by operator:ann at 2026-01-04T00:00:00.000Z"}},
		{[]string{"add", "Fix it", "--project", "mobile"}, []toolCall{{"task_create", obj{"title": "Fix it", "project": "mobile"}}}, []string{"added T-3 to project mobile: backlog, by operator:ann at 2026-01-04T00:00:00.000Z"}},
		{[]string{"update", "t-3", "--status", "done", "--progress", "100"}, []toolCall{{"task_update", obj{"task_id": "T-3", "status": "done", "progress": 100.0}}},
			[]string{"status todo → in_progress", "claimed_by operator:ann", "warning: mind this"}},
		{[]string{"update", "T-3", "--release"}, []toolCall{{"task_update", obj{"task_id": "T-3", "release": true}}}, nil},
		{[]string{"claim", "T-3"}, []toolCall{{"task_update", obj{"task_id": "T-3", "claim": true}}}, []string{"claimed_by operator:ann"}},
		{[]string{"next"}, []toolCall{{"task_next_actions", obj{"project": "ws"}}}, []string{
			"# ID PRIORITY TITLE ASSIGNEE WHY",
			"1 T-1 high Ready unassigned high priority, nothing open under it",
			"2 T-4 normal Parent unassigned normal priority, 2 open sub-tasks",
			"not ready:", "T-5 Waits waiting on T-1", "T-6 Stuck blocked: no access"}},
		{[]string{"next", "--project", "mobile", "--claim", "--include-blocked", "--limit", "3"},
			[]toolCall{{"task_next_actions", obj{"project": "mobile", "claim": true, "include_blocked": true, "limit": 3.0}}}, nil},
		{[]string{"decide", "T-3", "use bbolt", "--branch", "main"}, []toolCall{{"thought_record", obj{"task_id": "T-3", "type": "decision", "content": "use bbolt", "branch": "main"}}},
			[]string{"decision Θ-3 recorded on T-3's trail at position 3 by operator:ann at 2026-01-06T00:00:00.000Z (hash ab12)"}},
	} {
		name := strings.Join(c.args, " ")
		fake, out, err := runTask(t, c.args...)
		if err != nil {
			t.Errorf("task %s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(fake.calls, c.calls) {
			t.Errorf("task %s called\n%v\nwant\n%v", name, fake.calls, c.calls)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			lines[strings.Join(strings.Fields(l), " ")] = true
		}
		for _, want := range c.out {
			if !lines[want] {
				t.Errorf("task %s: no line %q in\n%s", name, want, out)
			}
		}
	}
}

// A command line the tool would refuse is refused before any call: by the
// tool's schema (its field and rule, exit 1) or as a usage error (exit 2).
func TestTaskCommandLinesRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args        []string
		field, rule string // the schema's refusal
		usage       string // else an error naming this
	}{
		{args: []string{"update", "T-3", "--status", "bogus"}, field: "status", rule: "enum"},
		{args: []string{"show", "T-x"}, field: "task_id", rule: "pattern"},
		{args: []string{"list", "--limit", "0"}, field: "limit", rule: "minimum"},
		{args: []string{"add", strings.Repeat("x", 257)}, field: "title", rule: "maxLength"},
		{args: []string{"decide", "T-3", ""}, field: "content", rule: "minLength"},
		{args: []string{"update", "T-3", "--progress", "101"}, field: "progress", rule: "maximum"},
		{args: []string{"update", "T-3"}, usage: "name something to change"},
		{args: []string{"list", "--limit", "many"}, usage: "--limit"},
		{args: []string{"claim", "T-3", "--status", "done"}, usage: "unknown flag: --status"},
		{args: []string{"claim", "T-3", "--progress", "5"}, usage: "unknown flag: --progress"},
		{args: []string{"decide", "T-3", "x", "--type", "risk"}, usage: "unknown flag: --type"},
		{args: []string{"show", "T-1", "--include-thought-trail"}, usage: "unknown flag"},
		{args: []string{"add"}, usage: "accepts 1 arg"},
		{args: []string{"decide", "T-3"}, usage: "accepts 2 arg"},
	} {
		name := strings.Join(c.args, " ")
		fake, _, err := runTask(t, c.args...)
		for _, call := range fake.calls {
			if call.Tool != "project_register" {
				t.Errorf("task %s: called %s although the command line was refused", name, call.Tool)
			}
		}
		if c.field != "" {
			e, ok := errs.As(err)
			if !ok || e.Code != errs.InvalidInput || e.Details["field"] != c.field || e.Details["constraint"] != c.rule {
				t.Errorf("task %s: %v, want the refusal of %s by %s", name, err, c.field, c.rule)
			}
			continue
		}
		var u usageErr
		if !errors.As(err, &u) && (err == nil || !cobraUsage(err)) || !strings.Contains(err.Error(), c.usage) {
			t.Errorf("task %s: %v, want a usage error naming %q", name, err, c.usage)
		}
	}
}

// A search that stopped counting says that more tasks match than its
// total_count, and where the next page starts.
func TestTaskListSaysACappedTotalIsALowerBound(t *testing.T) {
	t.Parallel()
	page := obj{"tasks": []any{obj{"task_id": "T-9", "status": "todo", "priority": "normal", "title": "One", "assignee": ""}},
		"total_count": 1000.0, "total_capped": true, "offset": 999.0, "limit": 1.0}
	var b strings.Builder
	renderTaskList(&b, page, nil)
	if want := "1000–1000 of more than 1000 tasks; --offset 1000 shows the next page"; !strings.Contains(b.String(), want) {
		t.Errorf("output %q lacks %q", b.String(), want)
	}
	delete(page, "total_capped")
	b.Reset()
	renderTaskList(&b, page, nil)
	if want := "1000–1000 of 1000 tasks\n"; !strings.Contains(b.String(), want) {
		t.Errorf("output %q lacks %q", b.String(), want)
	}
}
