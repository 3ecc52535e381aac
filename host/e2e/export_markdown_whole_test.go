package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// A text the import cut keeps its whole in the task's thought trail
// (docs/decisions.md D41); the markdown export writes the whole text back,
// and the board read back cuts it the same way: a second export is the
// same bytes.

// longText is a text of n characters, each line telling where it is.
func longText(n int, tag string) string {
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		fmt.Fprintf(&b, "%s line %d: Zoë 日本 — whole\n", tag, i)
	}
	return string([]rune(b.String())[:n])
}

// wholeFixture is a JSON Lines import of a task whose description holds
// 18,000 characters, one whose title holds 300, and a plain one.
func wholeFixture(t *testing.T, w *workspace, name string) (file, desc, title string) {
	t.Helper()
	desc, title = longText(18000, "desc"), strings.TrimSpace(strings.ReplaceAll(longText(300, "title"), "\n", " "))
	var b strings.Builder
	for _, line := range []map[string]any{
		{"task_id": "T-1", "title": "Long description", "description": desc, "status": "todo", "priority": "high"},
		{"task_id": "T-2", "title": title, "description": "short", "status": "done", "priority": "low"},
		{"task_id": "T-3", "title": "Plain", "description": "plain", "status": "backlog", "priority": "normal"},
	} {
		raw, _ := json.Marshal(line)
		b.Write(raw)
		b.WriteByte('\n')
	}
	return w.writeFile(name, b.String(), 0o644), desc, title
}

// boardHolds fails unless the board holds the whole description and
// title and no import marker.
func boardHolds(t *testing.T, board map[string]string, desc, title string) {
	t.Helper()
	if why := boardLacks(board, desc, title); why != "" {
		t.Fatal(why)
	}
}

// boardLacks says what keeps board from holding the whole texts, or "".
func boardLacks(board map[string]string, desc, title string) string {
	var withDesc, withTitle bool
	for name, data := range board {
		if strings.Contains(data, "the import kept the first") || strings.Contains(data, "[…]") {
			return fmt.Sprintf("%s holds the cut text:\n%.400s", name, data)
		}
		withDesc = withDesc || strings.Contains(data, "<!-- SECTION:DESCRIPTION:BEGIN -->\n"+desc+"\n<!-- SECTION:DESCRIPTION:END -->")
		withTitle = withTitle || strings.Contains(data, title)
	}
	if !withDesc || !withTitle {
		return fmt.Sprintf("the board lacks the whole description (%v) or title (%v)", withDesc, withTitle)
	}
	return ""
}

func TestExportMarkdownWholeImportedText(t *testing.T) {
	w := newWorkspace(t)
	file, desc, title := wholeFixture(t, w, "tasks.jsonl")
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	if code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", file, "--project", "imp"); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	// The store holds the cut text: what the exports put back is the
	// trail's, the JSON Lines one as the board.
	if stored := storedTexts(t, w); !strings.Contains(stored, "the import kept the first") || !strings.Contains(stored, "[…]") {
		t.Fatalf("the import did not cut the description and the title:\n%.300s", stored)
	}
	jsonlHoldsWhole(t, w, desc, title)

	first := filepath.Join(t.TempDir(), "board")
	took := exportMarkdown(t, w, nil, first, "--project", "imp")
	t.Logf("export --format markdown of 3 tasks, 2 of them cut: %v", took)
	one := readTree(t, first)
	if len(one) != 4 {
		t.Fatalf("the board holds %d files, want 3 tasks and config.yml", len(one))
	}
	boardHolds(t, one, desc, title)
	again := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w, nil, again, "--project", "imp")
	if d := sameTree(one, readTree(t, again)); d != "" {
		t.Fatalf("two exports of one store differ: %s", d)
	}

	w2 := newWorkspace(t)
	if code, _, errOut := runCairn(t, w2, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	if code, out, errOut := runCairn(t, w2, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", first, "--project", "imp"); code != 0 {
		t.Fatalf("import of the board: %d %s %s", code, out, errOut)
	}
	if stored := storedTexts(t, w2); !strings.Contains(stored, "the import kept the first") {
		t.Fatalf("the board read back did not cut the description again:\n%.300s", stored)
	}
	jsonlHoldsWhole(t, w2, desc, title)
	second := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w2, nil, second, "--project", "imp")
	if d := sameTree(one, readTree(t, second)); d != "" {
		t.Fatalf("the board read back exports differently: %s", d)
	}
}

// --watch writes the whole text of a task the import cut while it
// watched, through the daemon.
func TestExportMarkdownWatchWholeImportedText(t *testing.T) {
	w := newWorkspace(t)
	file, desc, title := wholeFixture(t, w, "tasks.jsonl")
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	if _, err := callOK(s, "task_create", map[string]any{"title": "before the watch"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "board")
	watch := startMarkdownWatch(t, w, dir)

	if code, out, errOut := runCairn(t, w, "", append([]string{"CAIRN_LOG_LEVEL=error"}, daemonEnv...), "import", file); code != 0 {
		t.Fatalf("import through the daemon: %d %s %s", code, out, errOut)
	}
	// The watch may write a file more than once while the import's
	// events arrive: wait for the board to settle on the whole texts.
	last := ""
	if !poll.Within(60*time.Second, func() bool {
		board := readTree(t, dir)
		last = boardLacks(board, desc, title)
		return len(board) == 5 && last == ""
	}) {
		t.Fatalf("the watched board never held the imported tasks whole: %s", last)
	}

	watch.stop(t)
}

// storedTexts is every title and description of project imp as the store
// holds them (task_get through a session of the workspace).
func storedTexts(t *testing.T, w *workspace) string {
	t.Helper()
	s := w.serve("CAIRN_LOG_LEVEL=error")
	defer s.close()
	out, err := callOK(s, "task_list", map[string]any{"project": "imp", "limit": 500})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	list, _ := out["tasks"].([]any)
	for _, item := range list {
		id, _ := item.(map[string]any)["task_id"].(string)
		task, err := callOK(s, "task_get", map[string]any{"task_id": id})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", task["title"], task["description"])
	}
	return b.String()
}

// jsonlHoldsWhole fails unless `cairn export tasks` writes the whole
// description and title, with no import marker (docs/decisions.md D41).
func jsonlHoldsWhole(t *testing.T, w *workspace, desc, title string) {
	t.Helper()
	byID, lines := exportAll(t, w)
	if strings.Contains(lines, "the import kept the first") || strings.Contains(lines, "[…]") {
		t.Fatalf("the JSON Lines export holds the cut text:\n%.300s", lines)
	}
	var withDesc, withTitle bool
	for _, e := range byID {
		withDesc = withDesc || e.Description == desc
		withTitle = withTitle || e.Title == title
	}
	if len(byID) != 3 || !withDesc || !withTitle {
		t.Fatalf("the JSON Lines export holds %d tasks, the whole description %v, the whole title %v", len(byID), withDesc, withTitle)
	}
}
