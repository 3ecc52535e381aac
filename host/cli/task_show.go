package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// `cairn task show`: every field task_get answers, one per line, then the
// description whole.

// taskPageFields are the fields the page shows first, in this order; the
// dependency lines show even when empty. Any other field the tool answers
// (one this command does not know, such as an import's source) follows in
// name order, so it appears without a change here.
var taskPageFields = []struct {
	key    string
	always bool
}{
	{"task_id", true}, {"title", true}, {"project", true}, {"status", true}, {"priority", true},
	{"progress", true}, {"assignee", true}, {"claimed_by", true}, {"labels", true},
	{"parent_id", false}, {"estimate_hours", false}, {"blocked_reason", false},
	{"depends_on", true}, {"depended_on_by", true}, {"dependents", true},
	{"created_at", true}, {"created_by", true}, {"updated_at", true}, {"updated_by", true},
}

// renderTask prints task_get's answer.
func renderTask(w io.Writer, out, _ obj) {
	shown := map[string]bool{"description": true, "thought_trail": true}
	for _, f := range taskPageFields {
		shown[f.key] = true
		v, set := out[f.key]
		if !set && !f.always {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\n", f.key, fieldText(v))
	}
	trail, _ := out["thought_trail"].([]any)
	fmt.Fprintf(w, "trail\t%d %s\n", len(trail), plural(len(trail), "thought", "thoughts"))
	var rest []string
	for k := range out {
		if !shown[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		writeField(w, k, out[k])
	}
	desc, _ := out["description"].(string)
	if strings.TrimSpace(desc) == "" {
		fmt.Fprintln(w, "description\t-")
		return
	}
	fmt.Fprintln(w, "\ndescription:")
	for _, line := range strings.Split(strings.TrimRight(desc, "\n"), "\n") {
		fmt.Fprintln(w, "  "+strings.ReplaceAll(line, "\t", "    "))
	}
}

// writeField prints a field the page does not know: an object as one line
// per field ("source.id"), anything else as its text.
func writeField(w io.Writer, key string, v any) {
	m, ok := v.(obj)
	if !ok || len(m) == 0 {
		fmt.Fprintf(w, "%s\t%s\n", key, fieldText(v))
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeField(w, key+"."+k, m[k])
	}
}

// fieldText is a field's value on one line: "-" when absent or empty.
func fieldText(v any) string {
	if s := cell(toolcmd.Text(v)); s != "" {
		return s
	}
	return "-"
}
