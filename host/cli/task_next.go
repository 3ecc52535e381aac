package cli

import (
	"fmt"
	"io"
)

// `cairn task next`: task_next_actions' candidates in its order, each with
// why it stands there, and with --include-blocked what waits and on what.

// nextOrder says how task_next_actions picks and orders its candidates
// (docs/decisions.md D10, D27).
const nextOrder = "todo tasks whose dependencies are all done or cancelled; higher priority first, then fewer open sub-tasks, then older"

// renderNext prints task_next_actions' answer.
func renderNext(w io.Writer, out, in obj) {
	project := str(out, "project")
	rows := items(out, "next_actions")
	if claimed := str(out, "claimed"); claimed != "-" {
		fmt.Fprintf(w, "claimed %s for %s: it is in_progress and yours\n\n", claimed, operator())
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "nothing is ready in project %s (ready: %s)\n", project, nextOrder)
		if in["include_blocked"] != true {
			fmt.Fprintln(w, "--include-blocked lists what waits and on what")
		}
	} else {
		fmt.Fprintf(w, "ready in project %s: %s\n\n", project, nextOrder)
		fmt.Fprintln(w, "#\tID\tPRIORITY\tTITLE\tASSIGNEE\tWHY")
		for i, r := range rows {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, str(r, "task_id"), str(r, "priority"),
				clipText(cell(str(r, "title")), titleWidth), cell(str(r, "assignee")), nextReason(r))
		}
	}
	if waiting := items(out, "blocked"); len(waiting) > 0 {
		fmt.Fprintln(w, "\nnot ready:")
		fmt.Fprintln(w, "ID\tTITLE\tWHY")
		for _, r := range waiting {
			why := str(r, "blocked_reason")
			if _, deps := r["waiting_on"]; !deps {
				why = "blocked: " + why
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", str(r, "task_id"), clipText(cell(str(r, "title")), titleWidth), cell(why))
		}
	}
}

// nextReason says why a candidate stands where it does: its priority and
// what is still open under it.
func nextReason(r obj) string {
	why := str(r, "priority") + " priority"
	switch n, _ := r["dependencies_unmet"].(float64); {
	case n == 0:
		why += ", nothing open under it"
	default:
		why += fmt.Sprintf(", %d open %s", int(n), plural(int(n), "sub-task", "sub-tasks"))
	}
	if p := str(r, "parent_id"); p != "-" {
		why += ", part of " + p
	}
	return why
}
