package cli

import (
	_ "embed"
	"encoding/json"
	"slices"
	"sort"
	"sync"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// `cairn task …` (docs/decisions.md D41) is the core area's task tools for a
// person at a terminal, generated from the tools' input schemas as `cairn
// admin` is (package toolcmd): each verb is one tool call, its flags the
// tool's input properties. The files task_*.go say how each answer reads as
// a table.

func init() { register(newTask) }

// coreToolsJSON is the declarations of the core tools the task commands
// call: a copy of the area's committed tool snapshots
// (plugins/core/testdata/toolsnaps), held to them by
// TestEmbeddedToolsMatchSnapshots.
//
//go:embed core_tools.json
var coreToolsJSON []byte

// coreTools is the embedded inventory, read once.
var coreTools = sync.OnceValue(func() toolcmd.Inventory { return inventoryOf("core_tools.json", coreToolsJSON) })

// taskFlagNames are the flags whose name is not their property's
// kebab-case spelling; --labels works too.
var taskFlagNames = map[string]string{"labels": "label"}

// taskBuilder makes the task commands (areaBuilder).
func taskBuilder(f *areaFlags) toolcmd.Builder {
	return areaBuilder("core", coreTools(), taskFlagNames, f)
}

func newTask() *cobra.Command {
	f := &areaFlags{}
	return taskCommand(taskBuilder(f), f)
}

// taskCommand is `cairn task` with its verbs, made by b.
func taskCommand(b toolcmd.Builder, f *areaFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "List, show, add, update, claim, approve and record decisions on tasks",
		Long: `The core area's task tools for a person at a terminal: each verb calls one
tool as the local operator ($CAIRN_AGENT_ID, else operator:$USER), through the
running daemon of the data dir when there is one, otherwise in the core area
started for the command. Tables by default, --json for the tool's output.
add and next work in --project, else the default project (CAIRN_PROJECT, else
the workspace directory's slug); list shows every project unless --project.
A task id may be given as T-12 or 12. Exit status: 0 done, 1 refused (the
message says why and what to do), 2 a command line that cannot run.`,
	}
	cmd.PersistentFlags().StringVar(&f.config, "config", "", "config file")
	cmd.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.AddCommand(
		b.Command(toolcmd.Spec{
			Tool: "task_list", Use: "list", Short: "List tasks, most recently updated first",
			Check:  func(inv *toolcmd.Invocation, out obj) error { return claimHolders(inv, out, f.json) },
			Render: renderTaskList,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_get", Use: "show", Args: []string{"task_id"},
			Short: "Show every field of a task, its dependencies and its trail",
			// The page always shows dependents and the trail's length.
			Omit:     []string{"include_thought_trail", "include_dependents"},
			Defaults: obj{"include_thought_trail": true, "include_dependents": true},
			Prepare:  taskIDArg,
			Render:   renderTask,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_create", Use: "add", Args: []string{"title"}, Short: "Add a task (it starts in backlog)",
			Prepare: addProject,
			Render:  renderCreated,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_update", Use: "update", Args: []string{"task_id"},
			Short: "Change a task's status, progress, priority, assignee, labels, dependencies or description",
			Prepare: func(inv *toolcmd.Invocation) error {
				if err := taskIDArg(inv); err != nil {
					return err
				}
				id, _ := inv.In["task_id"].(string)
				return nothingToChange(inv, "task", id)
			},
			Render: renderUpdated,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_update", Use: "claim", Args: []string{"task_id"},
			Short: "Claim a task: in_progress and yours (refused while another holds it)",
			// A claim is the task id alone: it sets the status and the
			// assignee itself, and `task update` changes the rest.
			Omit:     allBut(b.Tools["task_update"], "task_id"),
			Defaults: obj{"claim": true},
			Prepare:  taskIDArg,
			Render:   renderUpdated,
		}),
		b.Command(toolcmd.Spec{
			Tool: "task_next_actions", Use: "next", Short: "Show the tasks ready to start, most important first, and why",
			Prepare: nextProject,
			Render:  renderNext,
		}),
		b.Command(toolcmd.Spec{
			Tool: "thought_record", Use: "decide <task-id> <decision>", Args: []string{"task_id", "content"},
			Short:    "Record a decision on a task's trail",
			Omit:     []string{"type"},
			Defaults: obj{"type": "decision"},
			Prepare:  taskIDArg,
			Render:   renderDecision,
		}),
	)
	cmd.AddCommand(approveCommands(b)...)
	return cmd
}

// allBut lists the input properties of t other than keep: what a verb that
// offers only keep leaves out.
func allBut(t toolcmd.Tool, keep ...string) []string {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &schema)
	var out []string
	for name := range schema.Properties {
		if !slices.Contains(keep, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
