package tasks

import (
	"strings"

	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// An import (docs/decisions.md D41) makes the state that one task_create
// per task, followed by the task_update calls that take it to its status,
// would make: the same numbers, sequences, indexes, chain links and events.
// It checks the whole input before its first write, orders the tasks so
// that each comes after its parent and its dependencies, and then writes
// them many to a transaction (importrun.go).

// planned is one task of an import, validated: the task_create input and
// the task_update steps after it. Parent and Deps are indexes into the
// plan, always of tasks planned before this one.
type planned struct {
	In     CreateInput   `json:"in"`
	Parent int           `json:"parent"` // -1: none
	Deps   []int         `json:"deps,omitempty"`
	Steps  []UpdateInput `json:"steps,omitempty"`
	// Key is the task's id in its source, for the ids the import answers.
	Key string `json:"key"`
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

// planImport validates every task of an import into project and orders
// them parents and dependencies first (input order otherwise). The first
// problem found is returned, naming where it is and the field; nothing
// has been written then.
func planImport(project string, in []importer.Task) ([]planned, error) {
	if err := checkSlug("project", project); err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, errs.Invalid("tasks", "minItems", "the input holds no tasks")
	}
	index := make(map[string]int, len(in))
	for i := range in {
		t := &in[i]
		if j, dup := index[t.Key]; dup {
			return nil, importer.Refuse(t.Where, "task_id", "uniqueItems", "task %s appears twice (first at %s); each task needs its own id", t.Key, in[j].Where)
		}
		index[t.Key] = i
	}
	plans := make([]planned, len(in))
	for i := range in {
		p, err := planOne(project, &in[i], index)
		if err != nil {
			return nil, importer.At(in[i].Where, err)
		}
		plans[i] = p
	}
	order, err := dependencyOrder(in, plans)
	if err != nil {
		return nil, err
	}
	// Renumber Parent and Deps from input indexes to plan positions.
	pos := make([]int, len(order))
	for at, i := range order {
		pos[i] = at
	}
	out := make([]planned, len(order))
	for at, i := range order {
		p := plans[i]
		if p.Parent >= 0 {
			p.Parent = pos[p.Parent]
		}
		for k, d := range p.Deps {
			p.Deps[k] = pos[d]
		}
		out[at] = p
	}
	return out, nil
}

// planOne checks one task with task_create's and task_update's own rules
// and resolves its parent and dependencies to input indexes.
func planOne(project string, t *importer.Task, index map[string]int) (planned, error) {
	p := planned{Key: t.Key, Parent: -1, In: CreateInput{
		Title:         t.Title,
		Description:   t.Description,
		Project:       project,
		Priority:      t.Priority,
		Labels:        t.Labels,
		Assignee:      t.Assignee,
		EstimateHours: t.EstimateHours,
	}}
	if _, err := p.In.validateFields(); err != nil {
		return p, err
	}
	if t.Parent != "" {
		i, ok := index[t.Parent]
		if !ok {
			return p, errs.Invalidf("parent_id", "exists", "parent %s is not a task of this import", clip(t.Parent))
		}
		p.Parent = i
	}
	// The dependencies, renamed to stand-in task ids, go through
	// task_create's own check (count, form, duplicates).
	standIn := make([]string, len(t.DependsOn))
	for k, d := range t.DependsOn {
		i, ok := index[d]
		if !ok {
			return p, errs.Invalidf("depends_on", "exists", "dependency %s is not a task of this import", clip(d))
		}
		standIn[k] = FormatTaskID(uint64(i) + 1)
	}
	nums, err := checkDependsOn(standIn)
	if err != nil {
		return p, err
	}
	for _, n := range nums {
		p.Deps = append(p.Deps, int(n-1))
	}
	steps, err := importSteps(t)
	if err != nil {
		return p, err
	}
	p.Steps = steps
	return p, nil
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

// dependencyOrder orders the tasks so that each follows its parent and its
// dependencies, keeping input order where the edges allow; a loop through
// parents or dependencies is refused as task_update refuses one (D27).
func dependencyOrder(in []importer.Task, plans []planned) ([]int, error) {
	const (
		unseen = iota
		onPath
		placed
	)
	state := make([]uint8, len(plans))
	order := make([]int, 0, len(plans))
	var path []int
	// An explicit stack: a chain of 100,000 dependencies must not recurse
	// 100,000 deep.
	type frame struct{ task, next int }
	for root := range plans {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = onPath
		path = append(path[:0], root)
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			edges := plans[f.task].Deps
			if p := plans[f.task].Parent; p >= 0 {
				edges = append([]int{p}, edges...)
			}
			if f.next == len(edges) {
				state[f.task] = placed
				order = append(order, f.task)
				stack = stack[:len(stack)-1]
				path = path[:len(path)-1]
				continue
			}
			e := edges[f.next]
			f.next++
			switch state[e] {
			case onPath:
				return nil, importLoop(in, path, e)
			case unseen:
				state[e] = onPath
				stack = append(stack, frame{e, 0})
				path = append(path, e)
			}
		}
	}
	return order, nil
}

// importLoop reports the loop that closes at task e of path.
func importLoop(in []importer.Task, path []int, e int) error {
	start := 0
	for i, t := range path {
		if t == e {
			start = i
		}
	}
	keys := make([]string, 0, len(path)-start+1)
	for _, t := range path[start:] {
		keys = append(keys, in[t].Key)
	}
	last := in[path[len(path)-1]]
	return importer.At(last.Where, errs.Conflictf(errs.CircularDependency, "parent_id and depends_on close a loop: %s → %s; a task cannot wait on itself, directly or through other tasks. Remove one of these links", strings.Join(keys, " → "), keys[0]).
		With("field", "depends_on").With("cycle", keys))
}
