package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
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

// positiveLimits refuses a resource-limit override of zero or less.
func positiveLimits(inv *toolcmd.Invocation) error {
	return positive(inv.Cmd, "max-projects", "max-members", "storage-gb", "api-calls-per-day", "max-conversations")
}

// The lists of a workspace show up to the tools' maximum page.
var wholePage = map[string]any{"limit": 500}

func adminWorkspaces(b toolcmd.Builder) *cobra.Command {
	id := []string{"workspace_id"}
	return toolcmd.Group("workspaces", "Create, list, update and archive workspaces",
		b.Command(toolcmd.Spec{
			Tool: "admin_workspace_create", Use: "create", Short: "Create a workspace; --owner becomes its first owner",
			Flatten: []string{"resource_limits"}, Required: []string{"owner_id"},
			Prepare: positiveLimits, Render: one(wsCols),
		}),
		b.Command(toolcmd.Spec{Tool: "admin_workspace_list", Use: "list", Short: "List workspaces", Render: list(wsCols, "workspaces")}),
		b.Command(toolcmd.Spec{Tool: "admin_workspace_get", Use: "get", Args: id, Short: "Show a workspace", Render: one(wsCols)}),
		b.Command(toolcmd.Spec{
			Tool: "admin_workspace_update", Use: "update", Args: id, Short: "Change a workspace",
			Flatten: []string{"resource_limits"}, Prepare: positiveLimits, Render: one(wsCols),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_workspace_delete", Use: "delete", Args: id, Short: "Archive a workspace, its projects, invitations and scoped keys",
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintf(w, "workspace %s archived: %s projects archived, %s invitations and %s keys revoked\n",
					str(v, "id"), zero(str(v, "archived_projects")), zero(str(v, "revoked_invitations")), zero(str(v, "revoked_keys")))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_workspace_stats", Use: "stats", Args: id, Short: "Show a workspace's counts",
			Render: one(columns("PROJECTS\tMEMBERS\tCONVERSATIONS\tAPI CALLS TODAY\tSTORAGE BYTES",
				"projectCount", "memberCount", "conversationCount", "apiCallsToday", "storageUsed")),
		}),
	)
}

func adminMembers(b toolcmd.Builder) *cobra.Command {
	member := []string{"workspace_id", "user_id"}
	return toolcmd.Group("members", "Add, list, change and remove workspace members",
		b.Command(toolcmd.Spec{
			Tool: "admin_member_add", Use: "add", Args: member, Short: "Add a member (--role owner|admin|member|viewer)",
			Defaults: map[string]any{"role": "member"}, Render: one(memberCols),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_member_list", Use: "list", Args: []string{"workspace_id"}, Short: "List members",
			Defaults: wholePage, Render: list(memberCols, "members"),
		}),
		b.Command(toolcmd.Spec{Tool: "admin_member_get", Use: "get", Args: member, Short: "Show a member", Render: one(memberCols)}),
		b.Command(toolcmd.Spec{
			Tool: "admin_member_update_role", Use: "role", Args: []string{"workspace_id", "user_id", "role"},
			Short: "Change a member's role", Render: one(memberCols),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_member_remove", Use: "remove", Args: member, Short: "Remove a member (never the last owner)",
			Check: func(inv *toolcmd.Invocation, out obj) error {
				if removed, _ := out["removed"].(bool); !removed {
					ws, user := str(inv.In, "workspace_id"), str(inv.In, "user_id")
					return errs.NotFoundf(errs.NotFound, "user_id", "%s is not a member of workspace %s (`cairn admin members list %s` shows who is)", user, ws, ws)
				}
				return nil
			},
			Render: func(w io.Writer, _, in obj) {
				fmt.Fprintf(w, "%s removed from %s\n", str(in, "user_id"), str(in, "workspace_id"))
			},
		}),
	)
}

// acceptHints say, per refusal reason of an invitation, what to do.
var acceptHints = map[string]string{
	"invalid":            "no invitation has this token: pass the token `cairn admin invitations create` printed (not the invitation id), copied whole",
	"already_used":       "it was accepted already; ask the workspace's admin for a new invitation",
	"revoked":            "it was revoked; ask the workspace's admin for a new invitation",
	"expired":            "invitations are valid for 7 days; ask the workspace's admin for a new one",
	"workspace_archived": "its workspace is archived; unarchive it with `cairn admin workspaces update <id> --status active`, or invite into another",
}

func adminInvitations(b toolcmd.Builder) *cobra.Command {
	return toolcmd.Group("invitations", "Invite members and manage invitations",
		b.Command(toolcmd.Spec{
			Tool: "admin_invitation_create", Use: "create", Args: []string{"workspace_id"},
			Short:    "Invite someone (the token is printed once; valid 7 days, single use)",
			Defaults: map[string]any{"role": "member"},
			Render: func(w io.Writer, v, _ obj) {
				invCols(w, v)
				fmt.Fprintf(w, "\nToken (shown once; hand it to %s):\n%s\n", str(v, "email"), str(v, "token"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_invitation_accept", Use: "accept", Args: []string{"token"}, Short: "Redeem an invitation token",
			Check: func(_ *toolcmd.Invocation, out obj) error {
				if ok, _ := out["success"].(bool); ok {
					return nil
				}
				reason, _ := out["reason"].(string)
				hint := acceptHints[reason]
				if hint == "" {
					hint = "ask the workspace's admin for a new invitation"
				}
				return errs.Newf(409, errs.Conflict, "invitation not accepted (%s): %s", reason, hint).With("reason", reason)
			},
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintf(w, "%s joined %s as %s\n", str(v, "member.user_id"), str(v, "workspace_id"), str(v, "member.role"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_invitation_revoke", Use: "revoke", Args: []string{"invitation_id"}, Short: "Revoke a pending invitation",
			Check: func(inv *toolcmd.Invocation, out obj) error {
				if revoked, _ := out["revoked"].(bool); !revoked {
					return errs.NotFoundf(errs.NotFound, "invitation_id", "no pending invitation %s (`cairn admin invitations list <workspace-id>` shows them)", str(inv.In, "invitation_id"))
				}
				return nil
			},
			Render: func(w io.Writer, _, in obj) { fmt.Fprintf(w, "invitation %s revoked\n", str(in, "invitation_id")) },
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_invitation_list", Use: "list", Args: []string{"workspace_id"}, Short: "List a workspace's invitations",
			Defaults: wholePage, Render: list(invCols, "invitations"),
		}),
	)
}

func adminProjects(b toolcmd.Builder, f *areaFlags) *cobra.Command {
	byID := func(verb, short, tool string) *cobra.Command {
		return b.Command(toolcmd.Spec{Tool: tool, Use: verb + " <project-id|slug>", Args: []string{"project_id"}, Short: short, Render: one(projCols)})
	}
	return toolcmd.Group("projects", "Create and manage workspace projects (their slugs become task projects)",
		b.Command(toolcmd.Spec{
			Tool: "admin_project_create", Use: "create", Args: []string{"workspace_id"},
			Short: "Create a project; its slug is registered for tasks",
			// The admin area announces project.created; a daemon's core
			// area registers the slug at once. Without one, register it
			// through the core area now; if a server of its own holds the
			// core store, that server's admin area announces the event
			// within a second.
			Check: func(inv *toolcmd.Invocation, out obj) error {
				slug := str(out, "slug")
				note := fmt.Sprintf("project %s registered for tasks", slug)
				if c, ok := inv.Conn.(areaConn); ok && !c.viaDaemon() {
					if _, err := registerProjects(inv.Cmd, f.config, slug); err != nil {
						note = fmt.Sprintf("the running server registers %s for tasks within a second", slug)
					}
				}
				inv.Notes = append(inv.Notes, note)
				return nil
			},
			Render: one(projCols),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_project_list", Use: "list", Args: []string{"workspace_id"}, Short: "List a workspace's projects",
			Defaults: wholePage, Render: list(projCols, "projects"),
		}),
		byID("get", "Show a project", "admin_project_get"),
		b.Command(toolcmd.Spec{
			Tool: "admin_project_update", Use: "update <project-id|slug>", Args: []string{"project_id"},
			Short: "Change a project's name or description",
			Prepare: func(inv *toolcmd.Invocation) error {
				return nothingToChange(inv, "projects", str(inv.In, "project_id"))
			},
			Render: one(projCols),
		}),
		byID("archive", "Archive a project (its tasks stay readable; it takes no new tasks)", "admin_project_archive"),
		byID("unarchive", "Make an archived project take new tasks again", "admin_project_unarchive"),
		b.Command(toolcmd.Spec{
			Tool: "admin_project_delete", Use: "delete <project-id|slug>", Args: []string{"project_id"},
			Short:  "Delete a project record (its tasks stay)",
			Render: func(w io.Writer, v, _ obj) { fmt.Fprintf(w, "project %s deleted\n", str(v, "id")) },
		}),
	)
}
