package cli

import (
	"strings"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
	"github.com/cairn-mcp/cairn/host/clientsession"
)

// What the task commands complete before a call: the task id as a person
// types it, and the project a command works in when --project is not given.

// taskIDArg spells the task id argument as the tools do: "12" and "t-12"
// are T-12. Anything else is left for the tool's schema to refuse.
func taskIDArg(inv *toolcmd.Invocation) error {
	id, ok := inv.In["task_id"].(string)
	if !ok {
		return nil
	}
	switch {
	case id != "" && strings.Trim(id, "0123456789") == "":
		inv.In["task_id"] = "T-" + id
	case strings.HasPrefix(id, "t-"):
		inv.In["task_id"] = "T-" + id[2:]
	}
	return nil
}

// projectDefaulter is a connection that knows the command's default
// project.
type projectDefaulter interface{ defaultProject() string }

// defaultProject is the project a session started here would use
// (docs/decisions.md D24): CAIRN_PROJECT, else the workspace directory's
// slug.
func (c areaConn) defaultProject() string { return clientsession.Default(c.s).Project }

// nextProject asks task_next_actions about the default project when the
// command line names none: the operator's calls carry no session project
// of their own.
func nextProject(inv *toolcmd.Invocation) error {
	if _, set := inv.In["project"]; set {
		return nil
	}
	if d, ok := inv.Conn.(projectDefaulter); ok {
		inv.In["project"] = d.defaultProject()
	}
	return nil
}

// addProject files a new task under the default project when the command
// line names none, registering that project as a session's start
// registers it (an explicit --project must exist already, as it must for
// an agent).
func addProject(inv *toolcmd.Invocation) error {
	if _, set := inv.In["project"]; set {
		return nil
	}
	d, ok := inv.Conn.(projectDefaulter)
	if !ok {
		return nil
	}
	slug := d.defaultProject()
	if _, err := inv.Conn.Call(inv.Cmd.Context(), "project_register", obj{"slug": slug}, nil); err != nil {
		return err
	}
	inv.In["project"] = slug
	return nil
}
