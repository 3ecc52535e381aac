package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// `cairn task approve` and `cairn task approvals` (docs/decisions.md D45):
// the operator decides a move to done a project's approval holds back, and
// sees what waits. The CLI is a person's place to decide, so the decision
// is recorded via cli, by the operator.

// approveCommands are the approval verbs of `cairn task`, made by b.
func approveCommands(b toolcmd.Builder) []*cobra.Command {
	return []*cobra.Command{
		b.Command(toolcmd.Spec{
			Tool: "task_approve", Use: "approve", Args: []string{"task_id"},
			Short: "Approve a task's move to done (in review it moves now), or --reject it with a --reason",
			// The verb decides through --reject, from the CLI, and
			// completes the move: the tool's other choices are the
			// dashboard's and the host's.
			Omit:     []string{"decision", "via", "complete_move"},
			Defaults: obj{"decision": "approve", "via": "cli"},
			Flags: func(fs *pflag.FlagSet) {
				fs.Bool("reject", false, "reject the move instead: the task goes back to in_progress (needs --reason)")
			},
			Prepare: func(inv *toolcmd.Invocation) error {
				if err := taskIDArg(inv); err != nil {
					return err
				}
				reject, _ := inv.Cmd.Flags().GetBool("reject")
				if !reject {
					return nil
				}
				if reason, _ := inv.In["reason"].(string); strings.TrimSpace(reason) == "" {
					return usageErr{msg: "--reject needs --reason saying what the agent must change", cmd: inv.Cmd.CommandPath()}
				}
				inv.In["decision"] = "reject"
				return nil
			},
			Render: renderApproval,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_approvals", Use: "approvals", Short: "List the tasks whose move to done waits for a person, newest first",
			Render: renderApprovals,
		}),
	}
}

// renderApproval prints task_approve's answer.
func renderApproval(w io.Writer, out, _ obj) {
	status := str(out, "status")
	if prev := str(out, "previous_status"); prev != "-" {
		status = prev + " → " + status
	}
	fmt.Fprintf(w, "task_id\t%s\n", str(out, "task_id"))
	fmt.Fprintf(w, "decision\t%s\n", str(out, "state"))
	fmt.Fprintf(w, "status\t%s\n", status)
	fmt.Fprintf(w, "decided\t%s by %s via %s\n", str(out, "at"), cell(str(out, "by")), str(out, "via"))
	if reason := str(out, "reason"); reason != "-" {
		fmt.Fprintf(w, "reason\t%s\n", cell(reason))
	}
	fmt.Fprintf(w, "trail\t%s\n", str(out, "thought_id"))
	if out["state"] == "approved" && out["status"] != "done" {
		fmt.Fprintf(w, "\nThe approval stands: %s moves to done when it is next moved there.\n", str(out, "task_id"))
	}
}

var approvalCols = columns("ID\tPROJECT\tMODE\tSTATUS\tREQUESTED BY\tREQUESTED AT\tTITLE", "task_id", "project", "mode", "status", "requested_by", "requested_at", "title")

// renderApprovals prints task_approvals' answer.
func renderApprovals(w io.Writer, out, _ obj) {
	rows := items(out, "pending")
	if len(rows) == 0 {
		fmt.Fprintln(w, "no task waits for approval")
		return
	}
	for _, r := range rows {
		r["title"] = clipText(cell(str(r, "title")), titleWidth)
		r["requested_by"] = cell(str(r, "requested_by"))
	}
	approvalCols(w, rows...)
}
