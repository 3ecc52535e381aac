package core

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Tools behind `cairn import` and `cairn export tasks` (docs/decisions.md
// D41). They take a path rather than the tasks themselves: a 100,000-task
// file is far beyond what one tool call should carry, and the operator's
// command runs on the machine whose files the area reads and writes.

// ImportInput is task_import's input.
type ImportInput struct {
	Path    string   `json:"path" jsonschema:"minLength=1,description=Absolute path of the file (JSON Lines\\, tasks.json or beads' issues.jsonl) or folder (Backlog.md board\\, Claude Code task list or beads' .beads) to import"`
	Format  string   `json:"format,omitempty" jsonschema:"enum=jsonl,enum=taskmaster,enum=backlog,enum=beads,enum=claude,description=The input's format; absent: told by the path (a folder holding issues.jsonl: beads; a folder of *.json: claude; another folder: backlog; issues.jsonl or a .jsonl of beads issues: beads; .jsonl: jsonl; .json: taskmaster)"`
	Project string   `json:"project" jsonschema:"minLength=1,maxLength=63,description=Registered project slug the tasks go into"`
	Tags    []string `json:"tags,omitempty" jsonschema:"maxItems=100,description=task-master tags to read from a tagged tasks.json (absent: every tag)"`
	// TagProjects sends each task-master tag but master to a project of
	// its own (docs/decisions.md D41); `cairn import` sets it unless
	// --project names one.
	TagProjects bool   `json:"tag_projects,omitempty" jsonschema:"description=true: the tasks of each task-master tag but master go to the project named after the tag (registered when new)\\, not to project"`
	IDsPath     string `json:"ids_path,omitempty" jsonschema:"description=Absolute path of a file to write the task id each source id got to (JSON Lines of [source id\\, task id]; replaced when it exists) instead of answering them: an import of a million tasks answers in a few bytes"`
	Strict      bool   `json:"strict,omitempty" jsonschema:"description=All or nothing: the first problem refuses the whole input and nothing is written. Without it every task that can be imported is\\, and the report lists each one changed or skipped"`
	DryRun      bool   `json:"dry_run,omitempty" jsonschema:"description=Read and check the input and answer the report; write nothing"`
}

// ExportInput is task_export's input.
type ExportInput struct {
	Path    string `json:"path" jsonschema:"minLength=1,description=Absolute path of the JSON Lines file to write (replaced when it exists)"`
	Project string `json:"project" jsonschema:"minLength=1,maxLength=63,description=Registered project slug whose tasks are written"`
}

// ExportOutput is task_export's output.
type ExportOutput struct {
	Project  string `json:"project"`
	Exported int    `json:"exported"`
	Path     string `json:"path"`
}

func absolute(field, p string) error {
	if !filepath.IsAbs(p) {
		return errs.Invalidf(field, "pattern", "%s %q must be absolute: the area reads it from its own working directory", field, p)
	}
	return nil
}

func (c *Area) registerImportTools() {
	sdk.AddTool(c.p, sdk.Tool[ImportInput, tasks.ImportOutput]{
		Name: "task_import", Title: "Import tasks", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): imports the tasks of a cairn JSON Lines file, a task-master tasks.json (every tag, or those named; with tag_projects each tag but master into a project of its own), a Backlog.md folder, a beads issues.jsonl or a Claude Code task list folder into a registered project, as task_create and task_update calls would make them (numbers, sequences, chains, events), in transactions of 1,000 tasks; each task keeps its source id and times (task_get's source). The input is streamed and checked whole first. By default every task that can be imported is: a text over its field's limit is cut there and kept whole in the task's thought trail, a duplicate id is renumbered, a dependency or parent not in the import, across projects or closing a loop is dropped, a task breaking another rule is skipped; the answer's report lists each with its place, field, rule, action and fix. strict: the first problem answers 400 (409 for a loop) naming file, line and field, and nothing is written. dry_run: the report, nothing written. A folder's symlinks, hard-linked files, FIFOs and devices are refused. Answers, or writes to ids_path, the task id each source id got. Called by `cairn import`.",
		Handler: func(ctx context.Context, in ImportInput) (tasks.ImportOutput, error) {
			if err := absolute("path", in.Path); err != nil {
				return tasks.ImportOutput{}, err
			}
			if in.IDsPath != "" {
				if err := absolute("ids_path", in.IDsPath); err != nil {
					return tasks.ImportOutput{}, err
				}
			}
			svc, err := c.svc()
			if err != nil {
				return tasks.ImportOutput{}, err
			}
			// A board's decisions, checked before anything is written
			// and recorded once the tasks are in (import_decisions.go).
			decisions, err := readDecisions(in)
			if err != nil {
				return tasks.ImportOutput{}, err
			}
			var decisionsTask string
			out, err := importFileNoting(call(ctx), svc, in, &decisionsTask)
			if err == nil && !in.DryRun { // a dry run writes nothing
				err = c.afterImport(call(ctx), out, decisionsTask, decisions)
			}
			return out, err
		},
	})
	sdk.AddTool(c.p, sdk.Tool[ExportInput, ExportOutput]{
		Name: "task_export", Title: "Export tasks", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): writes every task of a project to a JSON Lines file, one task_get object (with its sequence) per line in task number order, from one read transaction: the form task_import reads back. Called by `cairn export tasks`.",
		Handler: func(_ context.Context, in ExportInput) (ExportOutput, error) {
			if err := absolute("path", in.Path); err != nil {
				return ExportOutput{}, err
			}
			svc, err := c.svc()
			if err != nil {
				return ExportOutput{}, err
			}
			f, err := os.OpenFile(in.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return ExportOutput{}, errs.Invalidf("path", "writable", "cannot write %s: %v", in.Path, err)
			}
			n, err := svc.Export(in.Project, f)
			if cerr := f.Close(); err == nil && cerr != nil {
				err = errs.Newf(500, errs.Internal, "cannot finish %s: %v", in.Path, cerr)
			}
			return ExportOutput{Project: in.Project, Exported: n, Path: in.Path}, err
		},
	})
}

// importFile imports the file or folder in.Path names: opened once and
// read as a stream, twice (docs/decisions.md D41), so that the area's
// memory does not grow with the input's size. The ids go to in.IDsPath
// when it is set, else into the answer.
func importFile(call tasks.Call, svc *tasks.Service, in ImportInput) (tasks.ImportOutput, error) {
	return importFileNoting(call, svc, in, new(string))
}

// importFileNoting is importFile noting the task id the Decisions task of
// a Backlog.md board got in decisionsTask.
func importFileNoting(call tasks.Call, svc *tasks.Service, in ImportInput, decisionsTask *string) (tasks.ImportOutput, error) {
	defer collectForImport()()
	src, err := importer.Open(in.Path, in.Format, importer.Options{Tags: in.Tags, TagProjects: in.TagProjects})
	if err != nil {
		return tasks.ImportOutput{}, err
	}
	defer func() { _ = src.Close() }()
	opts := tasks.ImportOptions{Strict: in.Strict, DryRun: in.DryRun, Format: in.Format}
	if opts.Format == "" {
		opts.Format = importer.DetectFormat(in.Path)
	}
	if in.IDsPath == "" || in.DryRun {
		// A dry run writes nothing, not even the ids file.
		ids := map[string]string{}
		out, err := svc.ImportFrom(call, in.Project, src, opts, decisionsTaskID(decisionsTask, func(key, id string) error {
			ids[key] = id
			return nil
		}))
		out.IDs = ids
		return out, err
	}
	f, err := os.OpenFile(in.IDsPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return tasks.ImportOutput{}, errs.Invalidf("ids_path", "writable", "cannot write %s: %v", in.IDsPath, err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	var werr error
	out, err := svc.ImportFrom(call, in.Project, src, opts, decisionsTaskID(decisionsTask, func(key, id string) error {
		if werr == nil {
			line, _ := json.Marshal([2]string{key, id})
			_, werr = w.Write(append(line, '\n'))
		}
		return nil
	}))
	if werr == nil {
		werr = w.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if err == nil && werr != nil {
		// The tasks are written; only the list of their ids is not.
		return out, errs.Newf(500, errs.Internal, "imported %d tasks into %s, but cannot write their ids to %s: %v", out.Imported, out.Project, in.IDsPath, werr)
	}
	return out, err
}
