package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// `cairn task list`: task_list's page as a table.

// titleWidth is the most of a title a list row shows; `task show` has all
// of it.
const titleWidth = 60

// claimHolders adds, for the table, who holds each in_progress task of a
// task_list page: task_list does not say, and only an in_progress task can
// be claimed (docs/decisions.md D27: leaving in_progress releases a claim),
// so this asks task_get for those rows alone. --json prints the tool's
// output as it is and skips it.
func claimHolders(inv *toolcmd.Invocation, out obj, asJSON bool) error {
	if asJSON {
		return nil
	}
	for _, row := range items(out, "tasks") {
		if row["status"] != "in_progress" {
			continue
		}
		var got struct {
			ClaimedBy string `json:"claimed_by"`
		}
		if _, err := inv.Conn.Call(inv.Cmd.Context(), "task_get", obj{"task_id": row["task_id"]}, &got); err != nil {
			return err
		}
		if got.ClaimedBy != "" {
			row["claimed_by"] = got.ClaimedBy
		}
	}
	return nil
}

var taskListCols = columns("ID\tSTATUS\tPRIORITY\tTITLE\tASSIGNEE\tCLAIMED", "task_id", "status", "priority", "title", "assignee", "claimed_by")

// renderTaskList prints the page and where it sits in the whole result.
func renderTaskList(w io.Writer, out, _ obj) {
	rows := items(out, "tasks")
	for _, r := range rows {
		r["title"] = clipText(cell(str(r, "title")), titleWidth)
		r["assignee"] = cell(str(r, "assignee"))
	}
	total, _ := out["total_count"].(float64)
	offset, _ := out["offset"].(float64)
	// A search may stop counting (total_capped): total_count is then a
	// lower bound, and more match.
	capped, _ := out["total_capped"].(bool)
	of := fmt.Sprint(int(total))
	if capped {
		of = "more than " + of
	}
	if len(rows) == 0 {
		if total > 0 {
			fmt.Fprintf(w, "no tasks from offset %d; %s match\n", int(offset), of)
			return
		}
		fmt.Fprintln(w, "no tasks match")
		return
	}
	taskListCols(w, rows...)
	first, last := int(offset)+1, int(offset)+len(rows)
	switch {
	case last < int(total) || capped:
		fmt.Fprintf(w, "\n%d–%d of %s tasks; --offset %d shows the next page\n", first, last, of, last)
	case first > 1:
		fmt.Fprintf(w, "\n%d–%d of %s tasks\n", first, last, of)
	default:
		fmt.Fprintf(w, "\n%d %s\n", last, plural(last, "task", "tasks"))
	}
}

// cell is text made safe for a table cell: one line, no tabs.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// clipText shortens s to at most n characters, marking the cut.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
