package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn admin keys …`: the admin area's admin_key_* tools.

var keyCols = columns("ID\tNAME\tPREVIEW\tUSER\tWORKSPACE\tSCOPES\tSTATUS\tREQUESTS\tEXPIRES\tCREATED",
	"id", "name", "key_preview", "user_id", "workspace_id", "scopes", "status", "usage.total_requests", "expires_at", "created_at")

// Rate limits a new key gets for the windows the operator does not name
// (the admin area's defaults).
const defaultPerMinute, defaultPerHour, defaultPerDay = 100, 1000, 10000

// rateWindows are rate_limit's properties, which the tools take all
// together.
var rateWindows = [3]string{"per_minute", "per_hour", "per_day"}

// positiveRates refuses a rate-limit window of zero or less.
func positiveRates(inv *toolcmd.Invocation) error {
	return positive(inv.Cmd, "per-minute", "per-hour", "per-day")
}

// fillRates completes a rate_limit the command line named part of from
// base.
func fillRates(inv *toolcmd.Invocation, base [3]int64) {
	rl, ok := inv.In["rate_limit"].(obj)
	if !ok {
		return
	}
	for i, w := range rateWindows {
		if _, set := rl[w]; !set {
			rl[w] = base[i]
		}
	}
}

func adminKeys(b toolcmd.Builder) *cobra.Command {
	return toolcmd.Group("keys", "Create, list, update, rotate and revoke API keys",
		b.Command(toolcmd.Spec{
			Tool: "admin_key_create", Use: "create", Short: "Issue an API key (the plaintext is printed once)",
			Flatten: []string{"rate_limit"},
			Prepare: func(inv *toolcmd.Invocation) error {
				if _, set := inv.In["user_id"]; !set {
					inv.In["user_id"] = operator()
				}
				if err := positiveRates(inv); err != nil {
					return err
				}
				fillRates(inv, [3]int64{defaultPerMinute, defaultPerHour, defaultPerDay})
				return nil
			},
			Render: func(w io.Writer, v, _ obj) {
				keyCols(w, v)
				fmt.Fprintf(w, "\nKey (shown once, store it now):\n%s\n", str(v, "plaintext_key"))
			},
		}),
		b.Command(toolcmd.Spec{Tool: "admin_key_list", Use: "list", Short: "List API keys", Render: list(keyCols, "keys")}),
		b.Command(toolcmd.Spec{Tool: "admin_key_get", Use: "get", Args: []string{"key_id"}, Short: "Show one API key", Render: one(keyCols)}),
		b.Command(toolcmd.Spec{
			Tool: "admin_key_update", Use: "update", Args: []string{"key_id"},
			Short:   "Change a key's name, scopes, permissions, rate limits or status",
			Flatten: []string{"rate_limit"},
			Prepare: keyUpdate,
			Render:  one(keyCols),
		}),
		b.Command(toolcmd.Spec{Tool: "admin_key_revoke", Use: "revoke", Args: []string{"key_id"}, Short: "Revoke an API key at once", Render: one(keyCols)}),
		b.Command(toolcmd.Spec{
			Tool: "admin_key_rotate", Use: "rotate", Args: []string{"key_id"},
			Short: "Replace an API key (the new plaintext is printed once)",
			// --grace is a duration; the tool takes milliseconds.
			Omit: []string{"grace_period_ms"},
			Flags: func(fs *pflag.FlagSet) {
				fs.Duration("grace", 0, "keep the old key valid this long (default: it stops at once; at most 168h)")
			},
			Prepare: func(inv *toolcmd.Invocation) error {
				grace, _ := inv.Cmd.Flags().GetDuration("grace")
				if grace < 0 || grace > 7*24*time.Hour {
					return usageAt(inv.Cmd, "--grace must be between 0 and 168h (got %s)", grace)
				}
				inv.In["grace_period_ms"] = grace.Milliseconds()
				return nil
			},
			Render: func(w io.Writer, v, _ obj) {
				old, _ := v["old_key"].(obj)
				nk, _ := v["new_key"].(obj)
				keyCols(w, old, nk)
				fmt.Fprintf(w, "\nNew key (shown once, store it now):\n%s\n", str(nk, "plaintext_key"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_key_validate", Use: "validate [<key>]", Args: []string{"key"}, PositionalArgs: cobra.MaximumNArgs(1),
			Short:   "Check a plaintext key (read from stdin when omitted, to keep it out of shell history); exit 1 when invalid",
			Prepare: keyFromStdin,
			Check: func(_ *toolcmd.Invocation, out obj) error {
				if valid, _ := out["valid"].(bool); !valid {
					reason, _ := out["reason"].(string)
					return invalidKey(reason)
				}
				return nil
			},
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintf(w, "valid\t%s\t%s\tuser %s\t%s\n", str(v, "api_key.id"), str(v, "api_key.name"), str(v, "api_key.user_id"), str(v, "api_key.status"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_key_usage", Use: "usage", Args: []string{"key_id"}, Short: "Show a key's request counts",
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintln(w, "WINDOW\tUSED\tLIMIT\tRESETS")
				for _, win := range []string{"minute", "hour", "day"} {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", win, str(v, win+".used"), str(v, win+".limit"), str(v, win+".reset_at"))
				}
				fmt.Fprintf(w, "\nTOTAL\t%s\n\n", str(v, "total_requests"))
				columns("DATE\tREQUESTS", "date", "requests")(w, items(v, "daily")...)
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_key_audit_log", Use: "audit", Args: []string{"key_id"}, Short: "Show a key's audit log",
			Defaults: map[string]any{"limit": 500},
			Render:   list(columns("AT\tACTION\tACTOR\tDETAILS", "at", "action", "actor", "details"), "entries"),
		}),
	)
}

// keyUpdate completes a partly named rate limit with the key's own windows
// (the tool takes all three) and refuses an update that changes nothing.
func keyUpdate(inv *toolcmd.Invocation) error {
	id, _ := inv.In["key_id"].(string)
	if err := positiveRates(inv); err != nil {
		return err
	}
	if _, named := inv.In["rate_limit"]; named {
		var cur struct {
			RateLimit struct {
				PerMinute int64 `json:"per_minute"`
				PerHour   int64 `json:"per_hour"`
				PerDay    int64 `json:"per_day"`
			} `json:"rate_limit"`
		}
		if _, err := inv.Conn.Call(inv.Cmd.Context(), "admin_key_get", obj{"key_id": id}, &cur); err != nil {
			return err
		}
		fillRates(inv, [3]int64{cur.RateLimit.PerMinute, cur.RateLimit.PerHour, cur.RateLimit.PerDay})
	}
	return nothingToChange(inv, "keys", id)
}

// keyFromStdin reads the key to validate from stdin when the command line
// does not give it.
func keyFromStdin(inv *toolcmd.Invocation) error {
	if _, given := inv.In["key"]; !given {
		b, err := io.ReadAll(io.LimitReader(inv.Cmd.InOrStdin(), 4096))
		if err != nil {
			return err
		}
		if key := strings.TrimSpace(string(b)); key != "" {
			inv.In["key"] = key
		}
	}
	if k, _ := inv.In["key"].(string); k == "" {
		return usageAt(inv.Cmd, "keys validate: give the key as an argument or on stdin")
	}
	return nil
}

// invalidKey is the refusal of `keys validate` for a key that does not
// work, saying why and what to do.
func invalidKey(reason string) error {
	hint := map[string]string{
		"revoked": "it was revoked; create a new one with `cairn admin keys create`",
		"expired": "it expired; create a new one with `cairn admin keys create`",
	}[reason]
	if hint == "" {
		hint = "no key of this installation matches it; check that it was copied whole (keys are printed once, at create or rotate)"
	}
	if reason == "" {
		reason = "invalid"
	}
	return errs.Newf(401, errs.Unauthorized, "the key is not valid (%s): %s", reason, hint).With("reason", reason)
}
