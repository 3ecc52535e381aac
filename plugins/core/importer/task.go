// Package importer reads the task files people bring to cairn — its own
// JSON Lines export, task-master's tasks.json, Backlog.md's task files,
// beads' issues.jsonl and Claude Code's task lists — into one neutral form, Task, for the tasks package to import
// (docs/decisions.md D41). It knows the formats and nothing of the store:
// every error names the file, the line (or the task file) and the field.
// A problem in one item of a file that can be read (an unknown status, a
// field of the wrong type) does not stop the reader: it yields the item
// mended (Task.Mended) or skipped (Task.Skip) and the import decides,
// strict, to refuse the file, or to report the item (mend.go).
package importer

import (
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Formats an import reads.
const (
	FormatJSONL      = "jsonl"
	FormatTaskMaster = "taskmaster"
	FormatBacklog    = "backlog"
	FormatBeads      = "beads"
	FormatClaude     = "claude"
)

// Formats lists every format, for the tool's schema and the CLI's help.
var Formats = []string{FormatJSONL, FormatTaskMaster, FormatBacklog, FormatBeads, FormatClaude}

// Task is one task of an import in cairn's terms. Key is the task's id in
// its source ("T-12", "5", "5.2", "task-7"); Parent and DependsOn name
// other tasks of the same import by their Key. Where says where the task
// was read ("tasks.jsonl:12", a Backlog.md file), for the errors of the
// checks that come later. Project is the project the task goes into, a
// task-master tag's; empty is the import's own.
type Task struct {
	Key           string
	Where         Where
	Project       string
	Title         string
	Description   *string
	Priority      *string
	Labels        []string
	Assignee      *string
	EstimateHours *float64
	Parent        string
	DependsOn     []string
	// Status is a cairn status; empty means backlog, a new task's own.
	Status        string
	Progress      *float64
	BlockedReason *string
	// Source is the task's id in its source as the source spells it
	// ("42.3", "back-222.1"); SourceCreated and SourceUpdated its times
	// there (RFC 3339), empty when the source has none.
	Source                       string
	SourceCreated, SourceUpdated string
	// Mended lists what the reader changed to read the task (mend.go);
	// Skip, when set, says why it could not read the item at all: the
	// task holds only its Key (when known) and Where.
	Mended []Mend
	Skip   error
}

// Where locates a task in its source: the file, and the line when the
// file holds many tasks (0 otherwise).
type Where struct {
	File string
	Line int
}

func (w Where) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s line %d", w.File, w.Line)
	}
	return w.File
}

// Refuse builds the typed error of an import: 400 ERR_INVALID_INPUT whose
// details name the file, the line (when there is one), the field and the
// rule, and whose message starts with where the problem is.
func Refuse(w Where, field, constraint, format string, args ...any) *errs.Error {
	e := errs.Invalidf(field, constraint, "%s: %s", place(w, field), fmt.Sprintf(format, args...)).With("file", w.File)
	if w.Line > 0 {
		e = e.With("line", w.Line)
	}
	return e
}

// At re-locates a typed field error found by a later check (the tasks
// package's limits) at w, keeping its field and rule.
func At(w Where, err error) error {
	e, ok := errs.As(err)
	if !ok {
		return err
	}
	out := e.With("file", w.File)
	if w.Line > 0 {
		out = out.With("line", w.Line)
	}
	field, _ := e.Details["field"].(string)
	out.Message = place(w, field) + ": " + e.Message
	return out
}

// place starts a message: where, and the field when one is at fault, so
// the line printed to the operator names both.
func place(w Where, field string) string {
	if field == "" {
		return w.String()
	}
	return w.String() + ", field " + field
}
