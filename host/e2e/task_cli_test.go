package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// `cairn task` (docs/decisions.md D41) works a task from the command line
// the way a person does, with and without a daemon serving the data dir.
func TestTaskCLIWithoutDaemon(t *testing.T) {
	w := newWorkspace(t)
	taskCLIFlow(t, w, []string{"CAIRN_PROJECT=web"})
	if pid := daemonPID(t, w); processAlive(pid) {
		t.Fatalf("a daemon (pid %d) runs although CAIRN_DAEMON=off", pid)
	}
	// Where nothing was ever stored, a read says so and creates nothing.
	empty := newWorkspace(t)
	for _, args := range [][]string{{"task", "list"}, {"task", "show", "T-1"}, {"task", "next"}} {
		code, _, errOut := runCairn(t, empty, "", nil, args...)
		if code != 1 || !strings.Contains(errOut, "no cairn data dir") {
			t.Fatalf("cairn %s in an empty workspace: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	if _, err := os.Stat(empty.dataDir()); !os.IsNotExist(err) {
		t.Fatalf("a read created %s: %v", empty.dataDir(), err)
	}
}

// Through the daemon: the commands run while a session holds the store,
// and the session sees what they did at once.
func TestTaskCLIThroughDaemon(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	taskCLIFlow(t, w, daemonEnv)
	if pid := daemonPID(t, w); !processAlive(pid) {
		t.Fatal("no daemon serves the data dir")
	}
	got, err := callOK(s, "task_get", map[string]any{"task_id": "T-1", "include_thought_trail": true})
	if err != nil {
		t.Fatal(err)
	}
	if got["claimed_by"] != "operator:tester" || len(got["thought_trail"].([]any)) != 1 {
		t.Fatalf("the session sees T-1 as %v", got)
	}
}

// taskCLIFlow adds, lists, shows, updates, claims, asks for the next task
// and records a decision, checking the tables and --json, then command
// lines that are refused.
func taskCLIFlow(t *testing.T, w *workspace, env []string) {
	t.Helper()
	env = append(append([]string{}, env...), "USER=tester")
	run := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := runCairn(t, w, "", env, args...)
		if code != wantCode {
			t.Fatalf("cairn %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, errOut)
		}
		if wantCode != 0 {
			return errOut
		}
		return out
	}
	// hasLine checks out for a line made of these words (spaces squeezed).
	hasLine := func(args, out string, words ...string) {
		t.Helper()
		want := strings.Join(words, " ")
		for _, l := range strings.Split(out, "\n") {
			if strings.Join(strings.Fields(l), " ") == want {
				return
			}
		}
		t.Errorf("cairn %s: no line %q in\n%s", args, want, out)
	}
	asJSON := func(out string) map[string]any {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("--json printed %v: %s", err, out)
		}
		return v
	}

	out := run(0, "task", "add", "Write the importer", "--priority", "high", "--label", "import,cli")
	if !strings.HasPrefix(out, "added T-1 to project web: backlog, by operator:tester at ") {
		t.Fatalf("task add: %q", out)
	}
	created := asJSON(run(0, "task", "add", "Document it", "--depends-on", "T-1", "--description", "Say how.\nWith examples.", "--json"))
	if created["task_id"] != "T-2" || created["status"] != "backlog" {
		t.Fatalf("task add --json: %v", created)
	}

	out = run(0, "task", "list")
	hasLine("task list", out, "ID", "STATUS", "PRIORITY", "TITLE", "ASSIGNEE", "CLAIMED")
	hasLine("task list", out, "T-1", "backlog", "high", "Write", "the", "importer", "unassigned", "-")
	hasLine("task list", out, "T-2", "backlog", "normal", "Document", "it", "unassigned", "-")
	hasLine("task list", out, "2", "tasks")
	if list := asJSON(run(0, "task", "list", "--status", "backlog", "--json")); list["total_count"] != 2.0 {
		t.Fatalf("task list --json: %v", list)
	}

	out = run(0, "task", "show", "T-2")
	for _, l := range [][]string{{"task_id", "T-2"}, {"project", "web"}, {"status", "backlog"}, {"depends_on", "T-1"},
		{"claimed_by", "-"}, {"trail", "0", "thoughts"}, {"created_by", "operator:tester"}, {"Say", "how."}, {"With", "examples."}} {
		hasLine("task show T-2", out, l...)
	}

	out = run(0, "task", "update", "T-1", "--status", "todo")
	hasLine("task update", out, "status", "backlog", "→", "todo")
	run(0, "task", "update", "2", "--status", "todo")

	out = run(0, "task", "next", "--include-blocked")
	hasLine("task next", out, "#", "ID", "PRIORITY", "TITLE", "ASSIGNEE", "WHY")
	hasLine("task next", out, "1", "T-1", "high", "Write", "the", "importer", "unassigned", "high", "priority,", "nothing", "open", "under", "it")
	hasLine("task next", out, "T-2", "Document", "it", "waiting", "on", "T-1")
	next := asJSON(run(0, "task", "next", "--json"))
	if next["count"] != 1.0 || next["project"] != "web" {
		t.Fatalf("task next --json: %v", next)
	}

	out = run(0, "task", "claim", "T-1")
	hasLine("task claim", out, "status", "todo", "→", "in_progress")
	hasLine("task claim", out, "claimed_by", "operator:tester")
	out = run(0, "task", "list")
	hasLine("task list", out, "T-1", "in_progress", "high", "Write", "the", "importer", "operator:tester", "operator:tester")
	// Another operator cannot take it: the tool's 409, exit 1.
	code, _, errOut := runCairn(t, w, "", append(env, "CAIRN_AGENT_ID=someone-else"), "task", "claim", "T-1")
	if code != 1 || !strings.Contains(errOut, "ERR_CONFLICT") || !strings.Contains(errOut, "claimed by operator:tester") {
		t.Fatalf("a second claim: exit %d\n%s", code, errOut)
	}

	out = run(0, "task", "decide", "T-1", "use bbolt")
	if !strings.HasPrefix(out, "decision ") || !strings.Contains(out, " recorded on T-1's trail at position 1 by operator:tester ") {
		t.Fatalf("task decide: %q", out)
	}
	out = run(0, "task", "show", "T-1")
	hasLine("task show T-1", out, "trail", "1", "thought")
	hasLine("task show T-1", out, "claimed_by", "operator:tester")
	hasLine("task show T-1", out, "depended_on_by", "T-2")
	shown := asJSON(run(0, "task", "show", "T-1", "--json"))
	if shown["claimed_by"] != "operator:tester" || len(shown["thought_trail"].([]any)) != 1 {
		t.Fatalf("task show --json: %v", shown)
	}

	// Refused: by the tool's schema with its field and rule (exit 1), or
	// as a command line that cannot run (exit 2).
	for _, c := range []struct {
		code int
		args []string
		want []string
	}{
		{1, []string{"task", "update", "T-1", "--status", "bogus"}, []string{"ERR_INVALID_INPUT", "status must be one of", "bogus"}},
		{1, []string{"task", "list", "--limit", "0"}, []string{"ERR_INVALID_INPUT", "limit"}},
		{1, []string{"task", "show", "T-99"}, []string{"ERR_TASK_NOT_FOUND", "T-99"}},
		{2, []string{"task", "list", "--limit", "many"}, []string{"--limit", "cairn task list --help"}},
		{2, []string{"task", "update", "T-1"}, []string{"name something to change", "--status"}},
		{2, []string{"task", "show"}, []string{"accepts 1 arg"}},
		{2, []string{"task", "frobnicate"}, []string{`unknown command "frobnicate"`}},
	} {
		errOut := run(c.code, c.args...)
		for _, s := range c.want {
			if !strings.Contains(errOut, s) {
				t.Errorf("cairn %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), s, errOut)
			}
		}
	}
}
