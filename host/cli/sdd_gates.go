package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn sdd gates|approve|approvals` (docs/decisions.md D45): whether a
// move of the sdd phase waits for a person, the operator's decision on
// one, and what waits, through the sdd area's internal gate tools. The
// CLI is a person's place to decide, so a decision is recorded via cli,
// by the operator.

func init() { register(newSdd) }

// gateModeHelp says what each phase gate mode does.
var gateModeHelp = map[string]string{
	"off":    "the agent moves the sdd phase freely",
	"on":     "a move of the sdd phase waits for a person's approval; the person at the agent's client may be asked",
	"strict": "a move of the sdd phase waits for a person's approval in the dashboard or the CLI; the agent's client is never asked",
}

func newSdd() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "sdd",
		Short: "Gate the spec-driven workflow's phase moves on a person's approval",
		Long: `Set the sdd phase gate and decide the moves it holds back, through the sdd
area's tools: in the running daemon of the data dir when there is one,
otherwise in the sdd area started for the command.`,
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	cmd.AddCommand(newSddGates(&configFile), newSddApprove(&configFile), newSddApprovals(&configFile))
	return cmd
}

// sddGates is sdd_gates' answer.
type sddGates struct {
	Mode      string `json:"mode"`
	ChangedBy string `json:"changed_by"`
	ChangedAt string `json:"changed_at"`
}

func newSddGates(configFile *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gates [off|on|strict]",
		Short: "Show or set whether a move of the sdd phase needs a person's approval",
		Long: `Without a mode, prints the phase gate's mode. With one, sets it:
  off     ` + gateModeHelp["off"] + `
  on      ` + gateModeHelp["on"] + `
  strict  ` + gateModeHelp["strict"] + `
A move is sdd_state set currentPhase to another phase, or sdd_plan of another
phase. People decide with ` + "`cairn sdd approve`" + ` or in the dashboard's Approvals
page (cairn ui --allow-actions); ` + "`cairn sdd approvals`" + ` lists what waits. No agent
can change the mode: sdd_state does not reach it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := obj{}
			mode := reads
			if len(args) == 1 {
				if _, ok := gateModeHelp[args[0]]; !ok {
					return usageErr{msg: fmt.Sprintf("gate mode %q is not one of off, on, strict", args[0]), cmd: cmd.CommandPath()}
				}
				in["mode"], mode = args[0], writes
			}
			c, err := openAreas(cmd.Context(), *configFile, mode, "sdd")
			if err != nil {
				return err
			}
			defer c.close()
			var out sddGates
			if _, err := c.call(cmd.Context(), "sdd_gates", in, &out); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sdd phase gates %s (%s)\n", out.Mode, gateModeHelp[out.Mode])
			if out.ChangedBy != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "set by %s at %s\n", out.ChangedBy, out.ChangedAt)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newSddApprove(configFile *string) *cobra.Command {
	var (
		asJSON, reject bool
		reason         string
	)
	cmd := &cobra.Command{
		Use:   "approve [phase]",
		Short: "Approve a waiting move of the sdd phase (it becomes current now), or --reject it with a --reason",
		Long: `Decides the move to phase that waits for a person; without a phase, the one
move that waits (` + "`cairn sdd approvals`" + ` lists them). Approved, the phase becomes
the current phase at once. Rejected, the agent's next attempt is refused with
the reason. The one who asked for the move cannot approve it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := obj{"decision": "approve", "via": "cli"}
			if reject {
				if strings.TrimSpace(reason) == "" {
					return usageErr{msg: "--reject needs --reason saying what the agent must change", cmd: cmd.CommandPath()}
				}
				in["decision"] = "reject"
			}
			if reason != "" {
				in["reason"] = reason
			}
			c, err := openAreas(cmd.Context(), *configFile, writes, "sdd")
			if err != nil {
				return err
			}
			defer c.close()
			if len(args) == 1 {
				in["phase"] = args[0]
			} else {
				phase, err := onlyWaitingPhase(cmd, c)
				if err != nil {
					return err
				}
				in["phase"] = phase
			}
			var out obj
			if _, err := c.call(cmd.Context(), "sdd_gate_approve", in, &out); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			renderGateDecision(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&reject, "reject", false, "reject the move instead (needs --reason)")
	cmd.Flags().StringVar(&reason, "reason", "", "why: required with --reject, at most 2000 characters")
	return cmd
}

// onlyWaitingPhase is the phase of the one move that waits for a person;
// none or several is a 409 that lists them.
func onlyWaitingPhase(cmd *cobra.Command, c *areaClient) (string, error) {
	var out obj
	if _, err := c.call(cmd.Context(), "sdd_gate_requests", obj{}, &out); err != nil {
		return "", err
	}
	rows := items(out, "pending")
	switch len(rows) {
	case 1:
		return str(rows[0], "phase_to"), nil
	case 0:
		return "", errs.New(409, errs.Conflict, "no move of the sdd phase waits for a person").With("field", "phase")
	}
	var phases []string
	for _, r := range rows {
		phases = append(phases, str(r, "phase_to"))
	}
	return "", errs.Newf(409, errs.Conflict, "%d moves of the sdd phase wait for a person (to %s): name the phase, `cairn sdd approve <phase>`", len(rows), strings.Join(phases, ", ")).
		With("field", "phase")
}

// renderGateDecision prints sdd_gate_approve's answer.
func renderGateDecision(w io.Writer, out obj) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "move\t%s → %s\n", phaseOrNone(str(out, "phase_from")), str(out, "phase_to"))
	fmt.Fprintf(tw, "decision\t%s\n", str(out, "state"))
	fmt.Fprintf(tw, "decided\t%s by %s via %s\n", str(out, "at"), cell(str(out, "by")), str(out, "via"))
	fmt.Fprintf(tw, "asked by\t%s\n", cell(str(out, "requested_by")))
	if reason := str(out, "reason"); reason != "-" {
		fmt.Fprintf(tw, "reason\t%s\n", cell(reason))
	}
	fmt.Fprintf(tw, "current phase\t%s\n", str(out, "current_phase"))
	_ = tw.Flush()
	if out["state"] == "approved" && out["moved"] != true {
		fmt.Fprintf(w, "\nThe approval stands: the phase moves to %s when the agent next moves it there.\n", str(out, "phase_to"))
	}
}

// phaseOrNone names the phase before the first.
func phaseOrNone(p string) string {
	if p == "" || p == "-" {
		return "(none)"
	}
	return p
}

var gateRequestCols = columns("TO\tFROM\tMODE\tREQUESTED BY\tREQUESTED AT\tLAST REJECTION", "phase_to", "phase_from", "mode", "requested_by", "requested_at", "last_rejection")

func newSddApprovals(configFile *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the moves of the sdd phase that wait for a person, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := openAreas(cmd.Context(), *configFile, reads, "sdd")
			if err != nil {
				return err
			}
			defer c.close()
			var out obj
			if _, err := c.call(cmd.Context(), "sdd_gate_requests", obj{}, &out); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			rows := items(out, "pending")
			if len(rows) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no move of the sdd phase waits for approval (phase gates %s)\n", str(out, "mode"))
				return nil
			}
			for _, r := range rows {
				r["phase_from"] = phaseOrNone(str(r, "phase_from"))
				r["requested_by"] = cell(str(r, "requested_by"))
				r["last_rejection"] = clipText(cell(str(r, "last_rejection")), titleWidth)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			gateRequestCols(tw, rows...)
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
