package tasks

import (
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// An import (docs/decisions.md D41) makes the state that one task_create
// per task, followed by the task_update calls that take it to its status,
// would make: the same numbers, sequences, indexes, chain links and events.
// It reads its input as a stream, twice. The first pass checks every task
// and keeps a compact plan: keys, parents and dependencies, no text
// (importplan.go); a problem is refused before anything is written. The
// second pass writes each task's checked input to the store's import
// journal (importstage.go), and the import then makes the tasks from the
// journal, many to a transaction (importrun.go).

// planned is one task of an import, checked: the task_create input and
// the task_update steps after it. Parent and Deps are plan positions of
// tasks planned before this one. It is what the import journal holds.
type planned struct {
	In     CreateInput   `json:"in"`
	Parent int           `json:"parent"` // -1: none
	Deps   []int         `json:"deps,omitempty"`
	Steps  []UpdateInput `json:"steps,omitempty"`
	// Key is the task's id in its source, for the ids the import answers.
	Key string `json:"key"`
	// Source is the task's origin; Texts the whole of its texts that
	// were longer than their fields allow, for its thought trail.
	Source *Origin        `json:"source,omitempty"`
	Texts  []importedText `json:"texts,omitempty"`
}

// statusPath is the shortest walk of the state machine from backlog to
// each status: the task_update calls that bring a new task there.
var statusPath = map[string][]string{
	StatusBacklog:    nil,
	StatusTodo:       {StatusTodo},
	StatusInProgress: {StatusTodo, StatusInProgress},
	StatusBlocked:    {StatusTodo, StatusBlocked},
	StatusReview:     {StatusTodo, StatusInProgress, StatusReview},
	StatusDone:       {StatusTodo, StatusInProgress, StatusReview, StatusDone},
	StatusCancelled:  {StatusCancelled},
}

// Import imports tasks held in memory into project for call, all of them
// or none (strict); see ImportFrom. Its answer maps every source id to the
// task id it got.
func (s *Service) Import(call Call, project string, in []importer.Task) (ImportOutput, error) {
	ids := make(map[string]string, len(in))
	out, err := s.ImportFrom(call, project, importer.Tasks(in), ImportOptions{Strict: true}, func(key, id string) error {
		ids[key] = id
		return nil
	})
	if err != nil {
		return ImportOutput{}, err
	}
	out.IDs = ids
	return out, nil
}

// ImportFrom imports the tasks src yields into project for call
// (docs/decisions.md D41): strict, all of them or, on any problem, none;
// otherwise every task it can, each one it changed or skipped in the
// answer's report. A dry run answers the report and writes nothing. It
// reads src twice (importer.Source) and holds a compact plan of some tens
// of bytes a task, never the input's text. Once every task is written,
// ids (when set) is told the task id each source id got, in the order
// they were made.
func (s *Service) ImportFrom(call Call, project string, src importer.Source, opts ImportOptions, ids func(key, taskID string) error) (ImportOutput, error) {
	var rep importReport
	plan, err := planImport(project, src, opts.Strict, s.cfg.ImportedText != nil, &rep)
	if err != nil {
		return ImportOutput{}, err
	}
	if opts.DryRun {
		// A dry run answers what the import would: into a project it
		// could write, whose check the import makes as it stages.
		err := s.st.View(func(tx kv.Tx) error {
			if tx.Bucket([]byte(store.BucketProjects)).Get([]byte(project)) == nil && project != call.Project {
				return projectNotFound(project)
			}
			return nil
		})
		if err != nil {
			return ImportOutput{}, err
		}
	}
	out := ImportOutput{Project: project, Projects: plan.projects, Imported: len(plan.keys), DryRun: opts.DryRun}
	rep.fill(&out)
	if opts.DryRun || len(plan.keys) == 0 {
		if len(plan.keys) == 0 {
			out.Imported = 0
		}
		return out, nil
	}
	head, staged, err := s.stageImport(call, project, plan, src, opts.Format)
	if err != nil {
		return ImportOutput{}, err
	}
	nums, txs, err := s.runImport(head, nil)
	if err != nil {
		return ImportOutput{}, err
	}
	if ids != nil {
		for at, i := range plan.order {
			if err := ids(plan.keys[i], FormatTaskID(nums[at])); err != nil {
				return ImportOutput{}, err
			}
		}
	}
	out.Transactions = staged + txs
	return out, nil
}

// checkTask checks one task with task_create's and task_update's own
// rules: its create input (parent and dependencies left to the caller,
// which resolves them), the task_update steps to its status, and the keys
// of its dependencies, duplicates dropped, in the order given.
func checkTask(project string, t *importer.Task) (CreateInput, []UpdateInput, []string, error) {
	in := CreateInput{
		Title:         t.Title,
		Description:   t.Description,
		Project:       project,
		Priority:      t.Priority,
		Labels:        t.Labels,
		Assignee:      t.Assignee,
		EstimateHours: t.EstimateHours,
	}
	if t.Project != "" { // a task-master tag's own project
		in.Project = t.Project
	}
	if _, err := in.validateFields(); err != nil {
		return in, nil, nil, err
	}
	// The dependencies, renamed to stand-in task ids, go through
	// task_create's own check (count, form, duplicates).
	local := make(map[string]uint64, len(t.DependsOn))
	var deps []string
	standIn := make([]string, len(t.DependsOn))
	for k, d := range t.DependsOn {
		n, ok := local[d]
		if !ok {
			n = uint64(len(local) + 1)
			local[d] = n
			deps = append(deps, d)
		}
		standIn[k] = FormatTaskID(n)
	}
	if _, err := checkDependsOn(standIn); err != nil {
		return in, nil, nil, err
	}
	steps, err := importSteps(t)
	if err != nil {
		return in, nil, nil, err
	}
	return in, steps, deps, nil
}

// importSteps are the task_update inputs that take a new task to t's
// status, progress and blocked reason; each is checked as task_update
// checks it. TaskID is filled in when the task has its number.
func importSteps(t *importer.Task) ([]UpdateInput, error) {
	status := t.Status
	if status == "" {
		status = StatusBacklog
	}
	if err := checkStatus("status", status); err != nil {
		return nil, err
	}
	var steps []UpdateInput
	for _, st := range statusPath[status] {
		steps = append(steps, UpdateInput{Status: &st})
	}
	if status == StatusBlocked {
		if t.BlockedReason == nil || strings.TrimSpace(*t.BlockedReason) == "" {
			return nil, errs.Invalid("blocked_reason", "required", "a blocked task needs a non-empty blocked_reason saying what blocks it")
		}
		steps[len(steps)-1].BlockedReason = t.BlockedReason
	}
	if t.Progress != nil && *t.Progress != 0 {
		if len(steps) == 0 {
			steps = append(steps, UpdateInput{})
		}
		steps[len(steps)-1].Progress = t.Progress
	}
	for i := range steps {
		steps[i].TaskID = FormatTaskID(1) // a stand-in, for the check
		if _, err := steps[i].validateFields(); err != nil {
			return nil, err
		}
		steps[i].TaskID = ""
	}
	return steps, nil
}
