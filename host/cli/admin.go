package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/plugins/admin/admin"
	"github.com/cairn-mcp/cairn/plugins/admin/webhooks"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newAdmin) }

// adminEnv is what every admin subcommand works with.
type adminEnv struct {
	s       config.Settings
	lib     *admin.Admin
	hooks   *webhooks.Manager
	cleanup func()
}

type adminFlags struct {
	config string
	json   bool
}

func openAdmin(f *adminFlags) (*adminEnv, error) {
	s, cleanup, err := settings(f.config)
	if err != nil {
		return nil, err
	}
	lib, st, err := admin.Open(s.DataDir, admin.Options{})
	if err != nil {
		cleanup()
		return nil, err
	}
	hooks := webhooks.New(st, webhooks.Options{Development: s.Env == "development"})
	return &adminEnv{s: s, lib: lib, hooks: hooks, cleanup: cleanup}, nil
}

// operator is the identity the CLI records as created_by.
func operator() string {
	if id := os.Getenv("CAIRN_AGENT_ID"); id != "" {
		return id
	}
	if u := os.Getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator"
}

// run wraps a subcommand: open the store, run, print JSON or a table.
func run(f *adminFlags, body func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(w io.Writer), error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		e, err := openAdmin(f)
		if err != nil {
			return err
		}
		defer e.cleanup()
		v, table, err := body(cmd, args, e)
		if err != nil {
			return err
		}
		if f.json || table == nil {
			return writeJSON(cmd.OutOrStdout(), v)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
		table(tw)
		return tw.Flush()
	}
}

func notFoundErr(what, id string) error {
	return errs.NotFoundf(errs.NotFound, "", "%s %s does not exist", what, id)
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func newAdmin() *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Administer API keys, workspaces, members, invitations, projects and webhooks",
		Long: `Operator administration of the admin area (Area B). Works whether or not a
cairn server is running: every command opens the admin store
(<data dir>/admin.db) for one transaction at a time. Tables by default,
--json for scripts. Events these commands cause (api_key.*, workspace.*,
project.created, ...) are delivered to webhooks and the host's bus by the
admin plugin of a running server, or when the next one starts.`,
	}
	cmd.PersistentFlags().StringVar(&f.config, "config", "", "config file")
	cmd.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.AddCommand(adminKeys(f), adminWorkspaces(f), adminMembers(f), adminInvitations(f), adminProjects(f), adminWebhooks(f))
	return cmd
}

func keyTable(keys ...*admin.APIKey) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "ID\tNAME\tPREVIEW\tUSER\tWORKSPACE\tSTATUS\tREQUESTS\tEXPIRES\tCREATED")
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", k.ID, k.Name, k.KeyPreview, k.UserID, deref(k.WorkspaceID), k.Status, k.Usage.TotalRequests, deref(k.ExpiresAt), k.CreatedAt)
		}
	}
}

func adminKeys(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Create, list, rotate and revoke API keys"}
	var name, user, org, ws, expires string
	var scopes, perms []string
	var perMin, perHour, perDay int
	create := &cobra.Command{
		Use:   "create",
		Short: "Issue an API key (the plaintext is printed once)",
		Args:  cobra.NoArgs,
		RunE: run(f, func(cmd *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
			o := admin.CreateAPIKeyOptions{Name: name, UserID: user, OrgID: org, Scopes: scopes, Permissions: perms, CreatedBy: operator()}
			if o.UserID == "" {
				o.UserID = operator()
			}
			if ws != "" {
				o.WorkspaceID = &ws
			}
			if expires != "" {
				o.ExpiresAt = &expires
			}
			if perMin+perHour+perDay > 0 {
				rl := admin.DefaultRateLimit
				if perMin > 0 {
					rl.PerMinute = perMin
				}
				if perHour > 0 {
					rl.PerHour = perHour
				}
				if perDay > 0 {
					rl.PerDay = perDay
				}
				o.RateLimit = &rl
			}
			k, err := e.lib.CreateAPIKey(o)
			if err != nil {
				return nil, nil, err
			}
			return k, func(w io.Writer) {
				keyTable(k)(w)
				fmt.Fprintf(w, "\nKey (shown once, store it now):\n%s\n", k.PlaintextKey)
			}, nil
		}),
	}
	create.Flags().StringVar(&name, "name", "", "what the key is for (required)")
	create.Flags().StringVar(&user, "user", "", "user the key acts as (default: the operator)")
	create.Flags().StringVar(&org, "org", "", "organization id")
	create.Flags().StringVar(&ws, "workspace", "", "scope the key to a workspace")
	create.Flags().StringVar(&expires, "expires-at", "", "ISO-8601 expiry")
	create.Flags().StringSliceVar(&scopes, "scope", nil, "scope (repeatable; default read,write)")
	create.Flags().StringSliceVar(&perms, "permission", nil, "permission (repeatable)")
	create.Flags().IntVar(&perMin, "per-minute", 0, "requests per minute (default 100)")
	create.Flags().IntVar(&perHour, "per-hour", 0, "requests per hour (default 1000)")
	create.Flags().IntVar(&perDay, "per-day", 0, "requests per day (default 10000)")
	_ = create.MarkFlagRequired("name")

	var lo admin.ListAPIKeysOptions
	list := &cobra.Command{
		Use: "list", Short: "List API keys", Args: cobra.NoArgs,
		RunE: run(f, func(_ *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
			keys, err := e.lib.ListAPIKeys(lo)
			if err != nil {
				return nil, nil, err
			}
			return keys, keyTable(keys...), nil
		}),
	}
	list.Flags().StringVar(&lo.UserID, "user", "", "only this user's keys")
	list.Flags().StringVar(&lo.OrgID, "org", "", "only this organization's keys")
	list.Flags().StringVar(&lo.WorkspaceID, "workspace", "", "only keys scoped to this workspace")
	list.Flags().StringVar(&lo.Status, "status", "", "active, revoked or expired")
	list.Flags().IntVar(&lo.Limit, "limit", 0, "at most this many (default 50, max 500)")
	list.Flags().IntVar(&lo.Offset, "offset", 0, "skip this many")

	get := &cobra.Command{
		Use: "get <key-id>", Short: "Show one API key", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			k, err := e.lib.GetAPIKeyByID(args[0])
			if err == nil && k == nil {
				err = notFoundErr("API key", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return k, keyTable(k), nil
		}),
	}
	var by string
	revoke := &cobra.Command{
		Use: "revoke <key-id>", Short: "Revoke an API key at once", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			if by == "" {
				by = operator()
			}
			k, err := e.lib.RevokeAPIKey(args[0], by)
			if err == nil && k == nil {
				err = notFoundErr("API key", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return k, keyTable(k), nil
		}),
	}
	revoke.Flags().StringVar(&by, "by", "", "who revokes (recorded in the audit log)")
	var grace time.Duration
	rotate := &cobra.Command{
		Use: "rotate <key-id>", Short: "Replace an API key (the new plaintext is printed once)", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			if by == "" {
				by = operator()
			}
			r, err := e.lib.RotateAPIKey(args[0], admin.RotateOptions{RotatedBy: by, GracePeriodMs: grace.Milliseconds()})
			if err == nil && r == nil {
				err = notFoundErr("API key", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) {
				keyTable(r.OldKey, r.NewKey)(w)
				fmt.Fprintf(w, "\nNew key (shown once, store it now):\n%s\n", r.NewKey.PlaintextKey)
			}, nil
		}),
	}
	rotate.Flags().StringVar(&by, "by", "", "who rotates (recorded in the audit log)")
	rotate.Flags().DurationVar(&grace, "grace", 0, "keep the old key valid this long (default: it stops at once)")
	validate := &cobra.Command{
		Use: "validate [<key>]", Short: "Check a plaintext key (read from stdin when omitted, to keep it out of shell history)", Args: cobra.MaximumNArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
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
			v, err := e.lib.ValidateAPIKey(key)
			if err != nil {
				return nil, nil, err
			}
			return v, func(w io.Writer) {
				if v.Valid {
					fmt.Fprintf(w, "valid\t%s\t%s\tuser %s\n", v.APIKey.ID, v.APIKey.Name, v.APIKey.UserID)
				} else {
					fmt.Fprintf(w, "invalid\t%s\n", v.Reason)
				}
			}, nil
		}),
	}
	usage := &cobra.Command{
		Use: "usage <key-id>", Short: "Show a key's request counts", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			u, err := e.lib.GetAPIKeyUsage(args[0], admin.UsageOptions{})
			if err == nil && u == nil {
				err = notFoundErr("API key", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return u, func(w io.Writer) {
				fmt.Fprintf(w, "WINDOW\tUSED\tLIMIT\tRESETS\n")
				fmt.Fprintf(w, "minute\t%d\t%d\t%s\nhour\t%d\t%d\t%s\nday\t%d\t%d\t%s\n", u.Minute.Used, u.Minute.Limit, u.Minute.ResetAt, u.Hour.Used, u.Hour.Limit, u.Hour.ResetAt, u.Day.Used, u.Day.Limit, u.Day.ResetAt)
				fmt.Fprintf(w, "\nTOTAL\t%d\n\nDATE\tREQUESTS\n", u.TotalRequests)
				for _, d := range u.Daily {
					fmt.Fprintf(w, "%s\t%d\n", d.Date, d.Requests)
				}
			}, nil
		}),
	}
	audit := &cobra.Command{
		Use: "audit <key-id>", Short: "Show a key's audit log", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			es, err := e.lib.GetAPIKeyAuditLog(args[0], admin.Page{Limit: admin.MaxLimit})
			if err == nil && es == nil {
				err = notFoundErr("API key", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return es, func(w io.Writer) {
				fmt.Fprintln(w, "AT\tACTION\tACTOR\tDETAILS")
				for _, x := range es {
					d, _ := json.Marshal(x.Details)
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", x.At, x.Action, x.Actor, d)
				}
			}, nil
		}),
	}
	cmd.AddCommand(create, list, get, revoke, rotate, validate, usage, audit)
	return cmd
}

func wsTable(ws ...*admin.Workspace) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "ID\tNAME\tOWNER\tSTATUS\tMAX PROJECTS\tMAX MEMBERS\tCREATED")
		for _, x := range ws {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", x.ID, x.Name, x.OwnerID, x.Status, x.ResourceLimits.MaxProjects, x.ResourceLimits.MaxMembers, x.CreatedAt)
		}
	}
}

func limitFlags(cmd *cobra.Command) func() *admin.LimitOverrides {
	vals := map[string]*int{}
	for _, n := range []string{"max-projects", "max-members", "storage-gb", "api-calls-per-day", "max-conversations"} {
		vals[n] = new(int)
		cmd.Flags().IntVar(vals[n], n, 0, "override the "+strings.ReplaceAll(n, "-", "_")+" limit")
	}
	return func() *admin.LimitOverrides {
		var o admin.LimitOverrides
		set := false
		pick := func(n string) *int {
			if cmd.Flags().Changed(n) {
				set = true
				v := *vals[n]
				return &v
			}
			return nil
		}
		o.MaxProjects, o.MaxMembers, o.StorageGB, o.APICallsPerDay, o.MaxConversations = pick("max-projects"), pick("max-members"), pick("storage-gb"), pick("api-calls-per-day"), pick("max-conversations")
		if !set {
			return nil
		}
		return &o
	}
}

func adminWorkspaces(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "workspaces", Short: "Create, list, update and archive workspaces"}
	var name, desc, owner, org, status string
	create := &cobra.Command{Use: "create", Short: "Create a workspace; --owner becomes its first owner", Args: cobra.NoArgs}
	limits := limitFlags(create)
	create.RunE = run(f, func(_ *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
		o := admin.CreateWorkspaceOptions{Name: name, Description: desc, OwnerID: owner, ResourceLimits: limits(), CreatedBy: operator()}
		if org != "" {
			o.OrgID = &org
		}
		ws, err := e.lib.CreateWorkspace(o)
		if err != nil {
			return nil, nil, err
		}
		return ws, wsTable(ws), nil
	})
	create.Flags().StringVar(&name, "name", "", "workspace name (required, ≤ 255 characters)")
	create.Flags().StringVar(&desc, "description", "", "description")
	create.Flags().StringVar(&owner, "owner", "", "owner user id (required)")
	create.Flags().StringVar(&org, "org", "", "organization id")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("owner")

	var lo admin.ListWorkspacesOptions
	list := &cobra.Command{
		Use: "list", Short: "List workspaces", Args: cobra.NoArgs,
		RunE: run(f, func(_ *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
			ws, err := e.lib.ListWorkspaces(lo)
			if err != nil {
				return nil, nil, err
			}
			return ws, wsTable(ws...), nil
		}),
	}
	list.Flags().StringVar(&lo.OwnerID, "owner", "", "only this owner's")
	list.Flags().StringVar(&lo.OrgID, "org", "", "only this organization's")
	list.Flags().StringVar(&lo.Status, "status", "", "active, suspended or archived")
	list.Flags().IntVar(&lo.Limit, "limit", 0, "at most this many")
	list.Flags().IntVar(&lo.Offset, "offset", 0, "skip this many")
	get := &cobra.Command{
		Use: "get <workspace-id>", Short: "Show a workspace", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			ws, err := e.lib.GetWorkspace(args[0])
			if err == nil && ws == nil {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return ws, wsTable(ws), nil
		}),
	}
	update := &cobra.Command{Use: "update <workspace-id>", Short: "Change a workspace", Args: cobra.ExactArgs(1)}
	ulimits := limitFlags(update)
	update.RunE = run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
		var u admin.WorkspaceUpdates
		if cmd.Flags().Changed("name") {
			u.Name = &name
		}
		if cmd.Flags().Changed("description") {
			u.Description = &desc
		}
		if cmd.Flags().Changed("status") {
			u.Status = &status
		}
		u.ResourceLimits = ulimits()
		ws, err := e.lib.UpdateWorkspace(args[0], u)
		if err == nil && ws == nil {
			err = notFoundErr("workspace", args[0])
		}
		if err != nil {
			return nil, nil, err
		}
		return ws, wsTable(ws), nil
	})
	update.Flags().StringVar(&name, "name", "", "new name")
	update.Flags().StringVar(&desc, "description", "", "new description")
	update.Flags().StringVar(&status, "status", "", "active, suspended or archived")
	del := &cobra.Command{
		Use: "delete <workspace-id>", Short: "Archive a workspace, its projects, invitations and scoped keys", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			r, err := e.lib.DeleteWorkspace(args[0], operator())
			if err == nil && !r.Success {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) {
				fmt.Fprintf(w, "workspace %s archived: %d projects archived, %d invitations and %d keys revoked\n", r.ID, r.ArchivedProjects, r.RevokedInvitations, r.RevokedKeys)
			}, nil
		}),
	}
	stats := &cobra.Command{
		Use: "stats <workspace-id>", Short: "Show a workspace's counts", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			s, err := e.lib.GetWorkspaceStats(args[0])
			if err == nil && s == nil {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return s, func(w io.Writer) {
				fmt.Fprintln(w, "PROJECTS\tMEMBERS\tCONVERSATIONS\tAPI CALLS TODAY\tSTORAGE BYTES")
				fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\n", s.ProjectCount, s.MemberCount, s.ConversationCount, s.APICallsToday, s.StorageUsed)
			}, nil
		}),
	}
	cmd.AddCommand(create, list, get, update, del, stats)
	return cmd
}

// actor is --by, else the workspace's owner: the operator acts with the
// owner's authority unless told otherwise.
func actor(e *adminEnv, by, workspaceID string) (string, error) {
	if by != "" {
		return by, nil
	}
	ws, err := e.lib.GetWorkspace(workspaceID)
	if err != nil {
		return "", err
	}
	if ws == nil {
		return "", notFoundErr("workspace", workspaceID)
	}
	return ws.OwnerID, nil
}

func memberTable(ms ...admin.Member) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "USER\tROLE\tJOINED\tINVITED BY")
		for _, m := range ms {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.UserID, m.Role, m.JoinedAt, m.InvitedBy)
		}
	}
}

func adminMembers(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "members", Short: "Add, list, change and remove workspace members"}
	var role, by string
	add := &cobra.Command{
		Use: "add <workspace-id> <user-id>", Short: "Add a member (--role owner|admin|member|viewer)", Args: cobra.ExactArgs(2),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			who, err := actor(e, by, args[0])
			if err != nil {
				return nil, nil, err
			}
			m, err := e.lib.AddMember(args[0], admin.AddMemberOptions{UserID: args[1], Role: role, InvitedBy: who})
			if err != nil {
				return nil, nil, err
			}
			return m, memberTable(*m), nil
		}),
	}
	add.Flags().StringVar(&role, "role", "member", "owner, admin, member or viewer")
	add.Flags().StringVar(&by, "by", "", "acting member (default: the workspace owner)")
	list := &cobra.Command{
		Use: "list <workspace-id>", Short: "List members", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			ms, err := e.lib.ListMembers(args[0], admin.ListMembersOptions{Page: admin.Page{Limit: admin.MaxLimit}})
			if err == nil && ms == nil {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return ms, memberTable(ms...), nil
		}),
	}
	get := &cobra.Command{
		Use: "get <workspace-id> <user-id>", Short: "Show a member", Args: cobra.ExactArgs(2),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			m, err := e.lib.GetMember(args[0], args[1])
			if err == nil && m == nil {
				err = notFoundErr("member", args[1])
			}
			if err != nil {
				return nil, nil, err
			}
			return m, memberTable(*m), nil
		}),
	}
	setRole := &cobra.Command{
		Use: "role <workspace-id> <user-id> <role>", Short: "Change a member's role", Args: cobra.ExactArgs(3),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			who, err := actor(e, by, args[0])
			if err != nil {
				return nil, nil, err
			}
			m, err := e.lib.UpdateMemberRole(args[0], args[1], args[2], who)
			if err != nil {
				return nil, nil, err
			}
			return m, memberTable(*m), nil
		}),
	}
	setRole.Flags().StringVar(&by, "by", "", "acting member (default: the workspace owner)")
	remove := &cobra.Command{
		Use: "remove <workspace-id> <user-id>", Short: "Remove a member (never the last owner)", Args: cobra.ExactArgs(2),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			who, err := actor(e, by, args[0])
			if err != nil {
				return nil, nil, err
			}
			ok, err := e.lib.RemoveMember(args[0], args[1], who)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, notFoundErr("member", args[1])
			}
			return map[string]bool{"removed": ok}, func(w io.Writer) { fmt.Fprintf(w, "%s removed from %s\n", args[1], args[0]) }, nil
		}),
	}
	remove.Flags().StringVar(&by, "by", "", "acting member (default: the workspace owner)")
	cmd.AddCommand(add, list, get, setRole, remove)
	return cmd
}

func invTable(is ...admin.Invitation) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "ID\tEMAIL\tROLE\tSTATUS\tINVITED BY\tEXPIRES")
		for _, i := range is {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", i.ID, i.Email, i.Role, i.Status, i.InvitedBy, i.ExpiresAt)
		}
	}
}

func adminInvitations(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "invitations", Short: "Invite members and manage invitations"}
	var email, role, by, msg, user string
	create := &cobra.Command{
		Use: "create <workspace-id>", Short: "Invite someone (the token is printed once; valid 7 days, single use)", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			who, err := actor(e, by, args[0])
			if err != nil {
				return nil, nil, err
			}
			inv, err := e.lib.InviteMember(args[0], admin.InviteMemberOptions{Email: email, Role: role, InvitedBy: who, Message: msg})
			if err != nil {
				return nil, nil, err
			}
			return inv, func(w io.Writer) {
				invTable(*inv)(w)
				fmt.Fprintf(w, "\nToken (shown once; hand it to %s):\n%s\n", inv.Email, inv.Token)
			}, nil
		}),
	}
	create.Flags().StringVar(&email, "email", "", "invitee's e-mail (required)")
	create.Flags().StringVar(&role, "role", "member", "owner, admin, member or viewer")
	create.Flags().StringVar(&by, "by", "", "inviting member (default: the workspace owner)")
	create.Flags().StringVar(&msg, "message", "", "message for the invitee")
	_ = create.MarkFlagRequired("email")
	accept := &cobra.Command{
		Use: "accept <token>", Short: "Redeem an invitation token", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			r, err := e.lib.AcceptInvitation(args[0], user)
			if err != nil {
				return nil, nil, err
			}
			if !r.Success {
				return nil, nil, errs.Newf(409, errs.Conflict, "invitation not accepted: %s", r.Reason).With("reason", r.Reason)
			}
			return r, func(w io.Writer) {
				fmt.Fprintf(w, "%s joined %s as %s\n", r.Member.UserID, r.WorkspaceID, r.Member.Role)
			}, nil
		}),
	}
	accept.Flags().StringVar(&user, "user", "", "member id to join as (default: the invitation's e-mail)")
	revoke := &cobra.Command{
		Use: "revoke <invitation-id>", Short: "Revoke a pending invitation", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			ok, err := e.lib.RevokeInvitation(args[0])
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, errs.NotFoundf(errs.NotFound, "", "no pending invitation %s", args[0])
			}
			return map[string]bool{"revoked": true}, func(w io.Writer) { fmt.Fprintf(w, "invitation %s revoked\n", args[0]) }, nil
		}),
	}
	list := &cobra.Command{
		Use: "list <workspace-id>", Short: "List a workspace's invitations", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			is, err := e.lib.ListInvitations(args[0], admin.ListInvitationsOptions{Page: admin.Page{Limit: admin.MaxLimit}})
			if err == nil && is == nil {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return is, invTable(is...), nil
		}),
	}
	cmd.AddCommand(create, accept, revoke, list)
	return cmd
}

func projTable(ps ...*admin.Project) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "ID\tSLUG\tNAME\tWORKSPACE\tSTATUS\tCREATED")
		for _, p := range ps {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Slug, p.Name, p.WorkspaceID, p.Status, p.CreatedAt)
		}
	}
}

func adminProjects(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "projects", Short: "Create and manage workspace projects (their slugs become task projects)"}
	var name, slug, desc string
	create := &cobra.Command{
		Use: "create <workspace-id>", Short: "Create a project; its slug is registered for tasks", Args: cobra.ExactArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			p, err := e.lib.CreateProject(args[0], admin.CreateProjectOptions{Name: name, Slug: slug, Description: desc, CreatedBy: operator()})
			if err != nil {
				return nil, nil, err
			}
			// With no server running, register the slug in the core
			// store now; a running server's admin plugin announces it on
			// the bus instead (the core store is locked by that server).
			registered := false
			if st, done, err := openCoreStore(f.config); err == nil {
				_, aerr := tasks.New(st, tasks.Config{}).AddProject(p.Slug)
				done()
				registered = aerr == nil
			}
			return p, func(w io.Writer) {
				projTable(p)(w)
				if registered {
					fmt.Fprintf(w, "\nproject %s registered for tasks\n", p.Slug)
				} else {
					fmt.Fprintf(w, "\nthe running server registers %s for tasks within a second\n", p.Slug)
				}
			}, nil
		}),
	}
	create.Flags().StringVar(&name, "name", "", "project name (required)")
	create.Flags().StringVar(&slug, "slug", "", "task project slug (default: derived from the name)")
	create.Flags().StringVar(&desc, "description", "", "description")
	_ = create.MarkFlagRequired("name")
	var status string
	list := &cobra.Command{
		Use: "list <workspace-id>", Short: "List a workspace's projects", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			ps, err := e.lib.ListProjects(args[0], admin.ListProjectsOptions{Status: status, Page: admin.Page{Limit: admin.MaxLimit}})
			if err == nil && ps == nil {
				err = notFoundErr("workspace", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return ps, projTable(ps...), nil
		}),
	}
	list.Flags().StringVar(&status, "status", "", "active or archived")
	one := func(use, short string, f2 func(e *adminEnv, id string) (*admin.Project, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " <project-id|slug>", Short: short, Args: cobra.ExactArgs(1),
			RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
				id := args[0]
				if p, err := e.lib.GetProject(id); err == nil && p != nil {
					id = p.ID
				}
				p, err := f2(e, id)
				if err == nil && p == nil {
					err = notFoundErr("project", args[0])
				}
				if err != nil {
					return nil, nil, err
				}
				return p, projTable(p), nil
			}),
		}
	}
	get := one("get", "Show a project", func(e *adminEnv, id string) (*admin.Project, error) { return e.lib.GetProject(id) })
	archive := one("archive", "Archive a project (its tasks stay)", func(e *adminEnv, id string) (*admin.Project, error) { return e.lib.ArchiveProject(id) })
	update := one("update", "Change a project's name or description", nil)
	update.Flags().StringVar(&name, "name", "", "new name")
	update.Flags().StringVar(&desc, "description", "", "new description")
	update.RunE = run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
		var u admin.ProjectUpdates
		if cmd.Flags().Changed("name") {
			u.Name = &name
		}
		if cmd.Flags().Changed("description") {
			u.Description = &desc
		}
		id := args[0]
		if p, err := e.lib.GetProject(id); err == nil && p != nil {
			id = p.ID
		}
		p, err := e.lib.UpdateProject(id, u)
		if err == nil && p == nil {
			err = notFoundErr("project", args[0])
		}
		if err != nil {
			return nil, nil, err
		}
		return p, projTable(p), nil
	})
	del := &cobra.Command{
		Use: "delete <project-id|slug>", Short: "Delete a project record (its tasks stay)", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			id := args[0]
			if p, err := e.lib.GetProject(id); err == nil && p != nil {
				id = p.ID
			}
			r, err := e.lib.DeleteProject(id)
			if err == nil && !r.Success {
				err = notFoundErr("project", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) { fmt.Fprintf(w, "project %s deleted\n", r.ID) }, nil
		}),
	}
	cmd.AddCommand(create, list, get, update, archive, del)
	return cmd
}

func hookTable(ws ...*webhooks.Webhook) func(w io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "ID\tURL\tEVENTS\tSTATUS\tDELIVERED\tFAILED\tCREATED")
		for _, h := range ws {
			ev := strings.Join(h.EventTypes, ",")
			if ev == "" {
				ev = "*"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", h.ID, h.URL, ev, h.Status, h.Stats.SuccessfulDeliveries, h.Stats.FailedDeliveries, h.CreatedAt)
		}
	}
}

func adminWebhooks(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "webhooks", Short: "Register, test and inspect signed webhooks"}
	var events []string
	var desc, secret, urlFlag, status, payload string
	var maxRetries, timeout int
	config := func(c *cobra.Command) *webhooks.ConfigOptions {
		var o webhooks.ConfigOptions
		if c.Flags().Changed("max-retries") {
			o.MaxRetries = &maxRetries
		}
		if c.Flags().Changed("timeout") {
			o.Timeout = &timeout
		}
		if o.MaxRetries == nil && o.Timeout == nil {
			return nil
		}
		return &o
	}
	reg := &cobra.Command{
		Use: "register <url>", Short: "Register a webhook (the secret is printed once)", Args: cobra.ExactArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			r, err := e.hooks.Register(cmd.Context(), webhooks.RegisterOptions{URL: args[0], Description: desc, EventTypes: events, Secret: secret, Config: config(cmd)})
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) {
				fmt.Fprintf(w, "webhook %s registered for %s\n\nSigning secret (shown once, store it now):\n%s\n", r.Webhook.ID, r.Webhook.URL, r.Webhook.Secret)
			}, nil
		}),
	}
	reg.Flags().StringSliceVar(&events, "event", nil, "event type or pattern (repeatable; * or category.*; default every event)")
	reg.Flags().StringVar(&desc, "description", "", "description")
	reg.Flags().StringVar(&secret, "secret", "", "signing secret (default: generated)")
	reg.Flags().IntVar(&maxRetries, "max-retries", 5, "retries per delivery (0-10)")
	reg.Flags().IntVar(&timeout, "timeout", 10000, "per-attempt timeout in ms")
	var lf webhooks.ListFilters
	list := &cobra.Command{
		Use: "list", Short: "List webhooks", Args: cobra.NoArgs,
		RunE: run(f, func(_ *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
			ws, err := e.hooks.ListWebhooks(lf)
			if err != nil {
				return nil, nil, err
			}
			return ws, hookTable(ws...), nil
		}),
	}
	list.Flags().StringVar(&lf.Status, "status", "", "active, paused, disabled or error")
	list.Flags().StringVar(&lf.EventType, "event", "", "only webhooks receiving this event type")
	list.Flags().IntVar(&lf.Limit, "limit", 0, "at most this many")
	get := &cobra.Command{
		Use: "get <webhook-id>", Short: "Show a webhook", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			h, err := e.hooks.GetWebhook(args[0])
			if err == nil && h == nil {
				err = notFoundErr("webhook", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return h, hookTable(h), nil
		}),
	}
	update := &cobra.Command{
		Use: "update <webhook-id>", Short: "Change a webhook's url, events, status or delivery config", Args: cobra.ExactArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			var u webhooks.Updates
			if cmd.Flags().Changed("url") {
				u.URL = &urlFlag
			}
			if cmd.Flags().Changed("event") {
				u.EventTypes = events
			}
			if cmd.Flags().Changed("status") {
				u.Status = &status
			}
			if cmd.Flags().Changed("description") {
				u.Description = &desc
			}
			u.Config = config(cmd)
			h, err := e.hooks.UpdateWebhook(cmd.Context(), args[0], u)
			if err == nil && h == nil {
				err = notFoundErr("webhook", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return h, hookTable(h), nil
		}),
	}
	update.Flags().StringVar(&urlFlag, "url", "", "new URL")
	update.Flags().StringSliceVar(&events, "event", nil, "event types (replaces the list)")
	update.Flags().StringVar(&status, "status", "", "active, paused, disabled or error")
	update.Flags().StringVar(&desc, "description", "", "description")
	update.Flags().IntVar(&maxRetries, "max-retries", 5, "retries per delivery (0-10)")
	update.Flags().IntVar(&timeout, "timeout", 10000, "per-attempt timeout in ms")
	simple := func(use, short, done string, op func(m *webhooks.Manager, id string) (bool, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " <webhook-id>", Short: short, Args: cobra.ExactArgs(1),
			RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
				ok, err := op(e.hooks, args[0])
				if err == nil && !ok {
					err = notFoundErr("webhook", args[0])
				}
				if err != nil {
					return nil, nil, err
				}
				return map[string]bool{"success": true}, func(w io.Writer) { fmt.Fprintf(w, "webhook %s %s\n", args[0], done) }, nil
			}),
		}
	}
	rot := &cobra.Command{
		Use: "rotate-secret <webhook-id>", Short: "Give a webhook a new secret (printed once; the old one signs for 24 h more)", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			s, err := e.hooks.RotateSecret(args[0], secret)
			if err == nil && s == "" {
				err = notFoundErr("webhook", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return map[string]string{"webhook_id": args[0], "secret": s}, func(w io.Writer) { fmt.Fprintf(w, "New signing secret (shown once):\n%s\n", s) }, nil
		}),
	}
	rot.Flags().StringVar(&secret, "secret", "", "new secret (default: generated)")
	test := &cobra.Command{
		Use: "test <webhook-id>", Short: "Send a signed webhook.test ping now", Args: cobra.ExactArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			r, err := e.hooks.TestWebhook(cmd.Context(), args[0])
			if err == nil && r == nil {
				err = notFoundErr("webhook", args[0])
			}
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) {
				fmt.Fprintln(w, "SUCCESS\tSTATUS\tMS\tERROR")
				fmt.Fprintf(w, "%v\t%d\t%d\t%s\n", r.Success, r.StatusCode, r.Duration, r.Error)
			}, nil
		}),
	}
	deliveries := &cobra.Command{
		Use: "deliveries <webhook-id>", Short: "Show a webhook's delivery history", Args: cobra.ExactArgs(1),
		RunE: run(f, func(_ *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			ds, err := e.hooks.GetDeliveryHistory(args[0], webhooks.HistoryOptions{Status: status, Limit: 500})
			if err != nil {
				return nil, nil, err
			}
			return ds, func(w io.Writer) {
				fmt.Fprintln(w, "ID\tEVENT\tSTATUS\tATTEMPTS\tCODE\tMS\tNEXT ATTEMPT\tCREATED")
				for _, d := range ds {
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", d.ID, d.EventType, d.Status, d.Attempts, d.StatusCode, d.Duration, d.NextAttemptAt, d.CreatedAt)
				}
			}, nil
		}),
	}
	deliveries.Flags().StringVar(&status, "status", "", "pending, delivered, failed or cancelled")
	stats := &cobra.Command{
		Use: "stats", Short: "Summarize webhooks and deliveries", Args: cobra.NoArgs,
		RunE: run(f, func(_ *cobra.Command, _ []string, e *adminEnv) (any, func(io.Writer), error) {
			ws, err := e.hooks.GetStats()
			if err != nil {
				return nil, nil, err
			}
			ds, err := e.hooks.GetDeliveryStats()
			if err != nil {
				return nil, nil, err
			}
			return map[string]any{"webhooks": ws, "deliveries": ds}, func(w io.Writer) {
				fmt.Fprintln(w, "WEBHOOKS\tACTIVE\tPAUSED\tDISABLED\tERROR")
				fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\n\n", ws.Total, ws.ByStatus["active"], ws.ByStatus["paused"], ws.ByStatus["disabled"], ws.ByStatus["error"])
				fmt.Fprintln(w, "DELIVERIES\tDELIVERED\tFAILED\tPENDING\tSUCCESS %\tAVG MS")
				fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%.2f\t%.1f\n", ds.TotalDeliveries, ds.Delivered, ds.Failed, ds.Pending, ds.SuccessRate, ds.AverageResponseTime)
			}, nil
		}),
	}
	trigger := &cobra.Command{
		Use: "trigger <event-type>", Short: "Fire an event at the subscribed webhooks now", Args: cobra.ExactArgs(1),
		RunE: run(f, func(cmd *cobra.Command, args []string, e *adminEnv) (any, func(io.Writer), error) {
			var data any = map[string]any{}
			if payload != "" {
				if err := json.Unmarshal([]byte(payload), &data); err != nil {
					return nil, nil, errs.Invalidf("payload", "json", "--payload must be JSON: %v", err)
				}
			}
			r, err := e.hooks.TriggerEvent(cmd.Context(), args[0], data)
			if err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) {
				fmt.Fprintln(w, "TRIGGERED\tDELIVERED\tFAILED\tPENDING")
				fmt.Fprintf(w, "%d\t%d\t%d\t%d\n", r.Triggered, r.Delivered, r.Failed, r.Pending)
			}, nil
		}),
	}
	trigger.Flags().StringVar(&payload, "payload", "", "event data as a JSON object")
	types := &cobra.Command{
		Use: "event-types", Short: "List the event types webhooks can subscribe to", Args: cobra.NoArgs,
		RunE: run(f, func(_ *cobra.Command, _ []string, _ *adminEnv) (any, func(io.Writer), error) {
			ts := webhooks.EventTypes()
			return map[string]any{"event_types": ts, "categories": webhooks.Categories()}, func(w io.Writer) {
				for _, t := range ts {
					fmt.Fprintln(w, t)
				}
			}, nil
		}),
	}
	cmd.AddCommand(reg, list, get, update,
		simple("pause", "Stop deliveries to a webhook", "paused", (*webhooks.Manager).Pause),
		simple("resume", "Make a webhook active again", "resumed", (*webhooks.Manager).Resume),
		simple("unregister", "Delete a webhook (history stays)", "unregistered", (*webhooks.Manager).Unregister),
		rot, test, deliveries, stats, trigger, types)
	return cmd
}
