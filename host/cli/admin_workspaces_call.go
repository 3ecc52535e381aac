package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn admin workspaces|members|invitations|projects …`: the admin area's
// workspace tools.

var (
	wsCols     = columns("ID\tNAME\tOWNER\tSTATUS\tMAX PROJECTS\tMAX MEMBERS\tCREATED", "id", "name", "owner_id", "status", "resource_limits.max_projects", "resource_limits.max_members", "created_at")
	memberCols = columns("USER\tROLE\tJOINED\tINVITED BY", "user_id", "role", "joined_at", "invited_by")
	invCols    = columns("ID\tEMAIL\tROLE\tSTATUS\tINVITED BY\tEXPIRES", "id", "email", "role", "status", "invited_by", "expires_at")
	projCols   = columns("ID\tSLUG\tNAME\tWORKSPACE\tSTATUS\tCREATED", "id", "slug", "name", "workspace_id", "status", "created_at")
)

// limitFlags adds the resource-limit overrides; limits reads the ones set.
func limitFlags(cmd *cobra.Command) (limits func() (obj, error)) {
	names := []string{"max-projects", "max-members", "storage-gb", "api-calls-per-day", "max-conversations"}
	for _, n := range names {
		cmd.Flags().Int(n, 0, "override the "+strings.ReplaceAll(n, "-", "_")+" limit")
	}
	return func() (obj, error) {
		if err := positive(cmd, names...); err != nil {
			return nil, err
		}
		o := obj{}
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				v, _ := cmd.Flags().GetInt(n)
				o[strings.ReplaceAll(n, "-", "_")] = v
			}
		}
		if len(o) == 0 {
			return nil, nil
		}
		return o, nil
	}
}

func adminWorkspaces(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "workspaces", Short: "Create, list, update and archive workspaces"}
	create := &cobra.Command{Use: "create", Short: "Create a workspace; --owner becomes its first owner", Args: cobra.NoArgs}
	limits := limitFlags(create)
	create.Flags().String("name", "", "workspace name (required, ≤ 255 characters)")
	create.Flags().String("description", "", "description")
	create.Flags().String("owner", "", "owner user id (required)")
	create.Flags().String("org", "", "organization id")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("owner")
	create.RunE = run(f, writes, simpleCall("admin_workspace_create", func(cmd *cobra.Command, _ []string) (obj, error) {
		in := obj{}
		set(cmd, in, map[string]string{"name": "name", "description": "description", "owner": "owner_id", "org": "org_id"})
		l, err := limits()
		if l != nil {
			in["resource_limits"] = l
		}
		return in, err
	}, one(wsCols)))

	ls := &cobra.Command{Use: "list", Short: "List workspaces", Args: cobra.NoArgs}
	ls.Flags().String("owner", "", "only this owner's")
	ls.Flags().String("org", "", "only this organization's")
	ls.Flags().String("status", "", "active, suspended or archived")
	ls.Flags().Int("limit", 0, "at most this many")
	ls.Flags().Int("offset", 0, "skip this many")
	ls.RunE = run(f, reads, simpleCall("admin_workspace_list", func(cmd *cobra.Command, _ []string) (obj, error) {
		in := obj{}
		set(cmd, in, map[string]string{"owner": "owner_id", "org": "org_id", "status": "status", "limit": "limit", "offset": "offset"})
		return in, nil
	}, list(wsCols, "workspaces")))

	get := &cobra.Command{
		Use: "get <workspace-id>", Short: "Show a workspace", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_workspace_get", id("workspace_id"), one(wsCols))),
	}
	update := &cobra.Command{Use: "update <workspace-id>", Short: "Change a workspace", Args: cobra.ExactArgs(1)}
	ulimits := limitFlags(update)
	update.Flags().String("name", "", "new name")
	update.Flags().String("description", "", "new description")
	update.Flags().String("status", "", "active, suspended or archived")
	update.RunE = run(f, writes, simpleCall("admin_workspace_update", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"workspace_id": args[0]}
		set(cmd, in, map[string]string{"name": "name", "description": "description", "status": "status"})
		l, err := ulimits()
		if l != nil {
			in["resource_limits"] = l
		}
		return in, err
	}, one(wsCols)))
	del := &cobra.Command{
		Use: "delete <workspace-id>", Short: "Archive a workspace, its projects, invitations and scoped keys", Args: cobra.ExactArgs(1),
		RunE: run(f, writes, simpleCall("admin_workspace_delete", id("workspace_id"), func(w io.Writer, v obj) {
			fmt.Fprintf(w, "workspace %s archived: %s projects archived, %s invitations and %s keys revoked\n",
				str(v, "id"), zero(str(v, "archived_projects")), zero(str(v, "revoked_invitations")), zero(str(v, "revoked_keys")))
		})),
	}
	stats := &cobra.Command{
		Use: "stats <workspace-id>", Short: "Show a workspace's counts", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_workspace_stats", id("workspace_id"), one(columns("PROJECTS\tMEMBERS\tCONVERSATIONS\tAPI CALLS TODAY\tSTORAGE BYTES",
			"projectCount", "memberCount", "conversationCount", "apiCallsToday", "storageUsed")))),
	}
	cmd.AddCommand(create, ls, get, update, del, stats)
	return cmd
}

// zero shows an omitted count as 0.
func zero(s string) string {
	if s == "-" {
		return "0"
	}
	return s
}

func adminMembers(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "members", Short: "Add, list, change and remove workspace members"}
	add := &cobra.Command{Use: "add <workspace-id> <user-id>", Short: "Add a member (--role owner|admin|member|viewer)", Args: cobra.ExactArgs(2)}
	add.Flags().String("role", "member", "owner, admin, member or viewer")
	add.RunE = run(f, writes, simpleCall("admin_member_add", func(cmd *cobra.Command, args []string) (obj, error) {
		role, _ := cmd.Flags().GetString("role")
		return obj{"workspace_id": args[0], "user_id": args[1], "role": role}, nil
	}, one(memberCols)))
	ls := &cobra.Command{
		Use: "list <workspace-id>", Short: "List members", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_member_list", func(_ *cobra.Command, args []string) (obj, error) {
			return obj{"workspace_id": args[0], "limit": 500}, nil
		}, list(memberCols, "members"))),
	}
	member := func(_ *cobra.Command, args []string) (obj, error) {
		return obj{"workspace_id": args[0], "user_id": args[1]}, nil
	}
	get := &cobra.Command{
		Use: "get <workspace-id> <user-id>", Short: "Show a member", Args: cobra.ExactArgs(2),
		RunE: run(f, reads, simpleCall("admin_member_get", member, one(memberCols))),
	}
	setRole := &cobra.Command{
		Use: "role <workspace-id> <user-id> <role>", Short: "Change a member's role", Args: cobra.ExactArgs(3),
		RunE: run(f, writes, simpleCall("admin_member_update_role", func(_ *cobra.Command, args []string) (obj, error) {
			return obj{"workspace_id": args[0], "user_id": args[1], "role": args[2]}, nil
		}, one(memberCols))),
	}
	remove := &cobra.Command{
		Use: "remove <workspace-id> <user-id>", Short: "Remove a member (never the last owner)", Args: cobra.ExactArgs(2),
		RunE: run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
			var r struct {
				Removed bool `json:"removed"`
			}
			out, err := c.call(cmd.Context(), "admin_member_remove", obj{"workspace_id": args[0], "user_id": args[1]}, &r)
			if err == nil && !r.Removed {
				err = errs.NotFoundf(errs.NotFound, "user_id", "%s is not a member of workspace %s (`cairn admin members list %s` shows who is)", args[1], args[0], args[0])
			}
			return out, func(w io.Writer, _ obj) { fmt.Fprintf(w, "%s removed from %s\n", args[1], args[0]) }, err
		}),
	}
	cmd.AddCommand(add, ls, get, setRole, remove)
	return cmd
}

// acceptHints say, per refusal reason of an invitation, what to do.
var acceptHints = map[string]string{
	"invalid":            "no invitation has this token: pass the token `cairn admin invitations create` printed (not the invitation id), copied whole",
	"already_used":       "it was accepted already; ask the workspace's admin for a new invitation",
	"revoked":            "it was revoked; ask the workspace's admin for a new invitation",
	"expired":            "invitations are valid for 7 days; ask the workspace's admin for a new one",
	"workspace_archived": "its workspace is archived; unarchive it with `cairn admin workspaces update <id> --status active`, or invite into another",
}

func adminInvitations(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "invitations", Short: "Invite members and manage invitations"}
	create := &cobra.Command{Use: "create <workspace-id>", Short: "Invite someone (the token is printed once; valid 7 days, single use)", Args: cobra.ExactArgs(1)}
	create.Flags().String("email", "", "invitee's e-mail (required)")
	create.Flags().String("role", "member", "owner, admin, member or viewer")
	create.Flags().String("message", "", "message for the invitee")
	_ = create.MarkFlagRequired("email")
	create.RunE = run(f, writes, simpleCall("admin_invitation_create", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"workspace_id": args[0]}
		role, _ := cmd.Flags().GetString("role")
		in["role"] = role
		set(cmd, in, map[string]string{"email": "email", "message": "message"})
		return in, nil
	}, func(w io.Writer, v obj) {
		invCols(w, v)
		fmt.Fprintf(w, "\nToken (shown once; hand it to %s):\n%s\n", str(v, "email"), str(v, "token"))
	}))
	accept := &cobra.Command{Use: "accept <token>", Short: "Redeem an invitation token", Args: cobra.ExactArgs(1)}
	accept.Flags().String("user", "", "member id to join as (default: the invitation's e-mail)")
	accept.RunE = run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		in := obj{"token": args[0]}
		set(cmd, in, map[string]string{"user": "user_id"})
		var r struct {
			Success bool   `json:"success"`
			Reason  string `json:"reason"`
		}
		out, err := c.call(cmd.Context(), "admin_invitation_accept", in, &r)
		if err == nil && !r.Success {
			hint := acceptHints[r.Reason]
			if hint == "" {
				hint = "ask the workspace's admin for a new invitation"
			}
			err = errs.Newf(409, errs.Conflict, "invitation not accepted (%s): %s", r.Reason, hint).With("reason", r.Reason)
		}
		return out, func(w io.Writer, v obj) {
			fmt.Fprintf(w, "%s joined %s as %s\n", str(v, "member.user_id"), str(v, "workspace_id"), str(v, "member.role"))
		}, err
	})
	revoke := &cobra.Command{
		Use: "revoke <invitation-id>", Short: "Revoke a pending invitation", Args: cobra.ExactArgs(1),
		RunE: run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
			var r struct {
				Revoked bool `json:"revoked"`
			}
			out, err := c.call(cmd.Context(), "admin_invitation_revoke", obj{"invitation_id": args[0]}, &r)
			if err == nil && !r.Revoked {
				err = errs.NotFoundf(errs.NotFound, "invitation_id", "no pending invitation %s (`cairn admin invitations list <workspace-id>` shows them)", args[0])
			}
			return out, func(w io.Writer, _ obj) { fmt.Fprintf(w, "invitation %s revoked\n", args[0]) }, err
		}),
	}
	ls := &cobra.Command{
		Use: "list <workspace-id>", Short: "List a workspace's invitations", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_invitation_list", func(_ *cobra.Command, args []string) (obj, error) {
			return obj{"workspace_id": args[0], "limit": 500}, nil
		}, list(invCols, "invitations"))),
	}
	cmd.AddCommand(create, accept, revoke, ls)
	return cmd
}

func adminProjects(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "projects", Short: "Create and manage workspace projects (their slugs become task projects)"}
	create := &cobra.Command{Use: "create <workspace-id>", Short: "Create a project; its slug is registered for tasks", Args: cobra.ExactArgs(1)}
	create.Flags().String("name", "", "project name (required)")
	create.Flags().String("slug", "", "task project slug (default: derived from the name)")
	create.Flags().String("description", "", "description")
	_ = create.MarkFlagRequired("name")
	create.RunE = run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		in := obj{"workspace_id": args[0]}
		set(cmd, in, map[string]string{"name": "name", "slug": "slug", "description": "description"})
		var p struct {
			Slug string `json:"slug"`
		}
		out, err := c.call(cmd.Context(), "admin_project_create", in, &p)
		if err != nil {
			return nil, nil, err
		}
		// The admin area announces project.created; a daemon's core area
		// registers the slug at once. Without one, register it through
		// the core area now; if a server of its own holds the core store,
		// that server's admin area announces the event within a second.
		note := fmt.Sprintf("project %s registered for tasks", p.Slug)
		if !c.viaDaemon() {
			if _, err := registerProjects(cmd, f.config, p.Slug); err != nil {
				note = fmt.Sprintf("the running server registers %s for tasks within a second", p.Slug)
			}
		}
		return out, func(w io.Writer, v obj) {
			projCols(w, v)
			fmt.Fprintf(w, "\n%s\n", note)
		}, nil
	})
	ls := &cobra.Command{Use: "list <workspace-id>", Short: "List a workspace's projects", Args: cobra.ExactArgs(1)}
	ls.Flags().String("status", "", "active or archived")
	ls.RunE = run(f, reads, simpleCall("admin_project_list", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"workspace_id": args[0], "limit": 500}
		set(cmd, in, map[string]string{"status": "status"})
		return in, nil
	}, list(projCols, "projects")))
	byID := func(use, short, tool string, mode access) *cobra.Command {
		return &cobra.Command{
			Use: use + " <project-id|slug>", Short: short, Args: cobra.ExactArgs(1),
			RunE: run(f, mode, simpleCall(tool, id("project_id"), one(projCols))),
		}
	}
	get := byID("get", "Show a project", "admin_project_get", reads)
	archive := byID("archive", "Archive a project (its tasks stay readable; it takes no new tasks)", "admin_project_archive", writes)
	unarchive := byID("unarchive", "Make an archived project take new tasks again", "admin_project_unarchive", writes)
	update := &cobra.Command{Use: "update <project-id|slug>", Short: "Change a project's name or description", Args: cobra.ExactArgs(1)}
	update.Flags().String("name", "", "new name")
	update.Flags().String("description", "", "new description")
	update.RunE = run(f, writes, simpleCall("admin_project_update", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"project_id": args[0]}
		set(cmd, in, map[string]string{"name": "name", "description": "description"})
		if len(in) == 1 {
			return nil, usagef("projects update %s: name something to change (--name, --description)", args[0])
		}
		return in, nil
	}, one(projCols)))
	del := &cobra.Command{
		Use: "delete <project-id|slug>", Short: "Delete a project record (its tasks stay)", Args: cobra.ExactArgs(1),
		RunE: run(f, writes, simpleCall("admin_project_delete", id("project_id"), func(w io.Writer, v obj) {
			fmt.Fprintf(w, "project %s deleted\n", str(v, "id"))
		})),
	}
	cmd.AddCommand(create, ls, get, update, archive, unarchive, del)
	return cmd
}
