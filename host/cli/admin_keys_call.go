package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn admin keys …`: the admin area's admin_key_* tools.

var keyCols = columns("ID\tNAME\tPREVIEW\tUSER\tWORKSPACE\tSCOPES\tSTATUS\tREQUESTS\tEXPIRES\tCREATED",
	"id", "name", "key_preview", "user_id", "workspace_id", "scopes", "status", "usage.total_requests", "expires_at", "created_at")

// Rate limits a new key gets for the windows the operator does not name
// (the admin area's defaults, shown in the flags' help).
const defaultPerMinute, defaultPerHour, defaultPerDay = 100, 1000, 10000

func adminKeys(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Create, list, update, rotate and revoke API keys"}
	rateFlags := func(c *cobra.Command, what string) {
		c.Flags().Int("per-minute", 0, "requests per minute ("+what+")")
		c.Flags().Int("per-hour", 0, "requests per hour ("+what+")")
		c.Flags().Int("per-day", 0, "requests per day ("+what+")")
	}
	// rate builds rate_limit from the flags over base; nil when none is set.
	rate := func(c *cobra.Command, base [3]int) (obj, error) {
		if err := positive(c, "per-minute", "per-hour", "per-day"); err != nil {
			return nil, err
		}
		if !c.Flags().Changed("per-minute") && !c.Flags().Changed("per-hour") && !c.Flags().Changed("per-day") {
			return nil, nil
		}
		for i, n := range []string{"per-minute", "per-hour", "per-day"} {
			if c.Flags().Changed(n) {
				base[i], _ = c.Flags().GetInt(n)
			}
		}
		return obj{"per_minute": base[0], "per_hour": base[1], "per_day": base[2]}, nil
	}

	create := &cobra.Command{
		Use:   "create",
		Short: "Issue an API key (the plaintext is printed once)",
		Args:  cobra.NoArgs,
	}
	create.Flags().String("name", "", "what the key is for (required)")
	create.Flags().String("user", "", "user the key acts as (default: the operator)")
	create.Flags().String("org", "", "organization id")
	create.Flags().String("workspace", "", "scope the key to a workspace")
	create.Flags().String("expires-at", "", "ISO-8601 expiry")
	create.Flags().StringSlice("scope", nil, "scope: read, write or admin (repeatable; default read,write)")
	create.Flags().StringSlice("permission", nil, "permission (repeatable)")
	rateFlags(create, "default 100 / 1000 / 10000")
	_ = create.MarkFlagRequired("name")
	create.RunE = run(f, writes, func(cmd *cobra.Command, _ []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		in := obj{"user_id": operator()}
		set(cmd, in, map[string]string{"name": "name", "user": "user_id", "org": "org_id", "workspace": "workspace_id", "expires-at": "expires_at", "scope": "scopes", "permission": "permissions"})
		rl, err := rate(cmd, [3]int{defaultPerMinute, defaultPerHour, defaultPerDay})
		if err != nil {
			return nil, nil, err
		}
		if rl != nil {
			in["rate_limit"] = rl
		}
		out, err := c.call(cmd.Context(), "admin_key_create", in, nil)
		return out, func(w io.Writer, v obj) {
			keyCols(w, v)
			fmt.Fprintf(w, "\nKey (shown once, store it now):\n%s\n", str(v, "plaintext_key"))
		}, err
	})

	ls := &cobra.Command{Use: "list", Short: "List API keys", Args: cobra.NoArgs}
	ls.Flags().String("user", "", "only this user's keys")
	ls.Flags().String("org", "", "only this organization's keys")
	ls.Flags().String("workspace", "", "only keys scoped to this workspace")
	ls.Flags().String("status", "", "active, rotating, revoked or expired")
	ls.Flags().Int("limit", 0, "at most this many (default 50, max 500)")
	ls.Flags().Int("offset", 0, "skip this many")
	ls.RunE = run(f, reads, simpleCall("admin_key_list", func(cmd *cobra.Command, _ []string) (obj, error) {
		in := obj{}
		set(cmd, in, map[string]string{"user": "user_id", "org": "org_id", "workspace": "workspace_id", "status": "status", "limit": "limit", "offset": "offset"})
		return in, nil
	}, list(keyCols, "keys")))

	get := &cobra.Command{
		Use: "get <key-id>", Short: "Show one API key", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_key_get", id("key_id"), one(keyCols))),
	}

	update := &cobra.Command{Use: "update <key-id>", Short: "Change a key's name, scopes, permissions, rate limits or status", Args: cobra.ExactArgs(1)}
	update.Flags().String("name", "", "new name")
	update.Flags().StringSlice("scope", nil, "scopes (replace the list; repeatable)")
	update.Flags().StringSlice("permission", nil, "permissions (replace the list; repeatable)")
	update.Flags().String("status", "", "active, revoked or expired")
	rateFlags(update, "unnamed windows keep their limit")
	update.RunE = run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		if err := positive(cmd, "per-minute", "per-hour", "per-day"); err != nil {
			return nil, nil, err
		}
		in := obj{"key_id": args[0]}
		set(cmd, in, map[string]string{"name": "name", "scope": "scopes", "permission": "permissions", "status": "status"})
		if cmd.Flags().Changed("per-minute") || cmd.Flags().Changed("per-hour") || cmd.Flags().Changed("per-day") {
			// The tool takes all three windows: keep the key's own for
			// the ones not named.
			var cur struct {
				RateLimit struct {
					PerMinute int `json:"per_minute"`
					PerHour   int `json:"per_hour"`
					PerDay    int `json:"per_day"`
				} `json:"rate_limit"`
			}
			if _, err := c.call(cmd.Context(), "admin_key_get", obj{"key_id": args[0]}, &cur); err != nil {
				return nil, nil, err
			}
			rl, err := rate(cmd, [3]int{cur.RateLimit.PerMinute, cur.RateLimit.PerHour, cur.RateLimit.PerDay})
			if err != nil {
				return nil, nil, err
			}
			in["rate_limit"] = rl
		}
		if len(in) == 1 {
			return nil, nil, usagef("keys update %s: name something to change (--name, --scope, --permission, --status, --per-minute, --per-hour, --per-day)", args[0])
		}
		out, err := c.call(cmd.Context(), "admin_key_update", in, nil)
		return out, one(keyCols), err
	})

	revoke := &cobra.Command{
		Use: "revoke <key-id>", Short: "Revoke an API key at once", Args: cobra.ExactArgs(1),
		RunE: run(f, writes, simpleCall("admin_key_revoke", id("key_id"), one(keyCols))),
	}

	rotate := &cobra.Command{Use: "rotate <key-id>", Short: "Replace an API key (the new plaintext is printed once)", Args: cobra.ExactArgs(1)}
	rotate.Flags().Duration("grace", 0, "keep the old key valid this long (default: it stops at once; at most 168h)")
	rotate.RunE = run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		grace, _ := cmd.Flags().GetDuration("grace")
		if grace < 0 || grace > 7*24*time.Hour {
			return nil, nil, usagef("--grace must be between 0 and 168h (got %s)", grace)
		}
		out, err := c.call(cmd.Context(), "admin_key_rotate", obj{"key_id": args[0], "grace_period_ms": grace.Milliseconds()}, nil)
		return out, func(w io.Writer, v obj) {
			old, _ := v["old_key"].(obj)
			nk, _ := v["new_key"].(obj)
			keyCols(w, old, nk)
			fmt.Fprintf(w, "\nNew key (shown once, store it now):\n%s\n", str(nk, "plaintext_key"))
		}, err
	})

	validate := &cobra.Command{
		Use:   "validate [<key>]",
		Short: "Check a plaintext key (read from stdin when omitted, to keep it out of shell history); exit 1 when invalid",
		Args:  cobra.MaximumNArgs(1),
	}
	validate.RunE = run(f, reads, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		key := ""
		if len(args) == 1 {
			key = args[0]
		} else {
			b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 4096))
			if err != nil {
				return nil, nil, err
			}
			key = strings.TrimSpace(string(b))
		}
		if key == "" {
			return nil, nil, usagef("keys validate: give the key as an argument or on stdin")
		}
		var v struct {
			Valid  bool   `json:"valid"`
			Reason string `json:"reason"`
		}
		out, err := c.call(cmd.Context(), "admin_key_validate", obj{"key": key}, &v)
		if err != nil {
			return nil, nil, err
		}
		if !v.Valid {
			return nil, nil, invalidKey(v.Reason)
		}
		return out, func(w io.Writer, v obj) {
			fmt.Fprintf(w, "valid\t%s\t%s\tuser %s\t%s\n", str(v, "api_key.id"), str(v, "api_key.name"), str(v, "api_key.user_id"), str(v, "api_key.status"))
		}, nil
	})

	usage := &cobra.Command{
		Use: "usage <key-id>", Short: "Show a key's request counts", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_key_usage", id("key_id"), func(w io.Writer, v obj) {
			fmt.Fprintln(w, "WINDOW\tUSED\tLIMIT\tRESETS")
			for _, win := range []string{"minute", "hour", "day"} {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", win, str(v, win+".used"), str(v, win+".limit"), str(v, win+".reset_at"))
			}
			fmt.Fprintf(w, "\nTOTAL\t%s\n\n", str(v, "total_requests"))
			columns("DATE\tREQUESTS", "date", "requests")(w, items(v, "daily")...)
		})),
	}
	audit := &cobra.Command{
		Use: "audit <key-id>", Short: "Show a key's audit log", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_key_audit_log", func(_ *cobra.Command, args []string) (obj, error) {
			return obj{"key_id": args[0], "limit": 500}, nil
		}, list(columns("AT\tACTION\tACTOR\tDETAILS", "at", "action", "actor", "details"), "entries"))),
	}
	cmd.AddCommand(create, ls, get, update, revoke, rotate, validate, usage, audit)
	return cmd
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
