package cli

import (
	"fmt"
	"io"
)

// What `cairn task add`, `update`, `claim` and `decide` print: what the
// tool did, in a line or a few.

// renderCreated prints task_create's answer.
func renderCreated(w io.Writer, out, in obj) {
	fmt.Fprintf(w, "added %s to project %s: %s, by %s at %s\n", str(out, "task_id"), str(in, "project"),
		str(out, "status"), str(out, "created_by"), str(out, "created_at"))
}

// renderUpdated prints task_update's answer: the status (and the one it
// left), progress, the claim, and the tool's warnings.
func renderUpdated(w io.Writer, out, _ obj) {
	status := str(out, "status")
	if prev := str(out, "previous_status"); prev != "-" {
		status = prev + " → " + status
	}
	fmt.Fprintf(w, "task_id\t%s\n", str(out, "task_id"))
	fmt.Fprintf(w, "status\t%s\n", status)
	fmt.Fprintf(w, "progress\t%s\n", str(out, "progress"))
	fmt.Fprintf(w, "claimed_by\t%s\n", str(out, "claimed_by"))
	fmt.Fprintf(w, "updated\t%s by %s\n", str(out, "updated_at"), str(out, "updated_by"))
	list, _ := out["warnings"].([]any)
	for _, warn := range list {
		fmt.Fprintf(w, "\nwarning: %s\n", cell(fmt.Sprint(warn)))
	}
}

// renderDecision prints thought_record's answer.
func renderDecision(w io.Writer, out, _ obj) {
	fmt.Fprintf(w, "decision %s recorded on %s's trail at position %s by %s at %s (hash %s)\n", str(out, "thought_id"),
		str(out, "task_id"), str(out, "chain_position"), str(out, "recorded_by"), str(out, "recorded_at"), str(out, "hash"))
}
