package tasks

import (
	"math"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// importPlan is what the first pass over an import's input keeps, by input
// index: each task's key, where it was read, its parent and its
// dependencies — no text (docs/decisions.md D41). With ids of a few
// characters it holds about 100 bytes a task at the end of the first pass
// and 55 once the references are resolved and the key index is dropped:
// for a million tasks, 100 MB and then 55 MB, whatever their text.
type importPlan struct {
	keys  []string
	where wheres
	// parent is an input index, -1 for none; task i's dependencies are
	// deps[depAt[i]:depAt[i+1]].
	parent []int32
	depAt  []uint32
	deps   []int32
	// index finds a key's task; refs are references to keys not read yet.
	index map[string]int32
	refs  []forwardRef
	// order lists input indexes in the order the tasks are made (each
	// after its parent and dependencies); pos is its inverse.
	order, pos []int32
	// projects are the projects tasks name besides the import's own (a
	// task-master tag's), in the order first named; proj is each task's,
	// as 1 + its index in projects (0: the import's own), nil while every
	// task is in the import's own.
	projects []string
	proj     []uint16
}

// forwardRef is a reference of task to a key read later: its parent
// (slot -1) or deps[slot].
type forwardRef struct {
	task, slot int32
	key        string
}

// wheres are the places the tasks were read: one file for all of them
// (JSON Lines, tasks.json) with a line each, or a file each (Backlog.md).
type wheres struct {
	file  string
	files []string // nil while every task is in file
	lines []int32
}

func (w *wheres) add(x importer.Where) {
	if len(w.lines) == 0 {
		w.file = x.File
	}
	if w.files == nil && x.File != w.file {
		w.files = make([]string, len(w.lines), cap(w.lines))
		for i := range w.files {
			w.files[i] = w.file
		}
	}
	if w.files != nil {
		w.files = append(w.files, x.File)
	}
	w.lines = append(w.lines, int32(min(x.Line, math.MaxInt32)))
}

func (w *wheres) at(i int32) importer.Where {
	x := importer.Where{File: w.file, Line: int(w.lines[i])}
	if w.files != nil {
		x.File = w.files[i]
	}
	return x
}

// maxImport bounds the tasks of one import: input indexes are int32.
const maxImport = math.MaxInt32 - 1

// planImport reads src once, checks every task with task_create's and
// task_update's own rules, and orders the tasks parents and dependencies
// first (input order otherwise). The first problem found in reading order
// is returned, naming where it is and the field; a reference to a task the
// input does not hold is found once all of it is read. Nothing is written.
func planImport(project string, src importer.Source) (*importPlan, error) {
	if err := checkSlug("project", project); err != nil {
		return nil, err
	}
	p := &importPlan{index: map[string]int32{}, depAt: []uint32{0}}
	err := src.Scan(func(t importer.Task) error {
		if len(p.keys) >= maxImport {
			return importer.Refuse(t.Where, "tasks", "maxItems", "an import holds at most %d tasks; split the input", maxImport)
		}
		i := int32(len(p.keys))
		if j, dup := p.index[t.Key]; dup {
			return importer.Refuse(t.Where, "task_id", "uniqueItems", "task %s appears twice (first at %s); each task needs its own id", t.Key, p.where.at(j))
		}
		_, _, deps, err := checkTask(project, &t)
		if err != nil {
			return importer.At(t.Where, err)
		}
		if err := p.addProject(project, t); err != nil {
			return err
		}
		p.index[t.Key] = i
		p.keys = append(p.keys, t.Key)
		p.where.add(t.Where)
		parent := int32(-1)
		if t.Parent != "" {
			parent = p.ref(i, -1, t.Parent)
		}
		p.parent = append(p.parent, parent)
		for _, d := range deps {
			p.deps = append(p.deps, p.ref(i, int32(len(p.deps)), d))
		}
		p.depAt = append(p.depAt, uint32(len(p.deps)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.keys) == 0 {
		return nil, errs.Invalid("tasks", "minItems", "the input holds no tasks")
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	if err := p.sameProjects(); err != nil {
		return nil, err
	}
	if err := p.orderTasks(); err != nil {
		return nil, err
	}
	return p, nil
}

// maxImportProjects bounds the projects one import writes to (proj).
const maxImportProjects = math.MaxUint16

// addProject notes the project of task t, the next of the plan, when it
// is not the import's own.
func (p *importPlan) addProject(project string, t importer.Task) error {
	at := 0
	if t.Project != "" && t.Project != project {
		at = slices.Index(p.projects, t.Project) + 1
		if at == 0 {
			if len(p.projects) >= maxImportProjects {
				return importer.Refuse(t.Where, "project", "maxItems", "an import writes to at most %d projects", maxImportProjects)
			}
			p.projects = append(p.projects, t.Project)
			at = len(p.projects)
		}
	}
	if at != 0 && p.proj == nil {
		p.proj = make([]uint16, len(p.keys), cap(p.keys))
	}
	if p.proj != nil {
		p.proj = append(p.proj, uint16(at))
	}
	return nil
}

// projectIndex is what proj holds for a task whose project is
// taskProject in an import into project; -1 for a project the plan does
// not hold.
func (p *importPlan) projectIndex(project, taskProject string) int {
	if taskProject == "" || taskProject == project {
		return 0
	}
	if at := slices.Index(p.projects, taskProject); at >= 0 {
		return at + 1
	}
	return -1
}

// projectOf is proj's entry of task i.
func (p *importPlan) projectOf(i int32) int {
	if p.proj == nil {
		return 0
	}
	return int(p.proj[i])
}

// sameProjects refuses a parent or a dependency in another project than
// its task's, as task_create refuses one, before anything is written.
func (p *importPlan) sameProjects() error {
	if p.proj == nil {
		return nil
	}
	for i := range int32(len(p.keys)) {
		for k := range p.edges(i) {
			e := p.edge(i, k)
			if p.proj[e] == p.proj[i] {
				continue
			}
			field, what := "depends_on", "dependency"
			if k == 0 && p.parent[i] >= 0 {
				field, what = "parent_id", "parent"
			}
			return importer.At(p.where.at(i), errs.Invalidf(field, "sameProject", "%s %s is in %s, task %s in %s; a task links only tasks of its own project", what, clip(p.keys[e]), p.projectName(e), clip(p.keys[i]), p.projectName(i)))
		}
	}
	return nil
}

// projectName names task i's project, the import's own as such.
func (p *importPlan) projectName(i int32) string {
	if p.proj[i] == 0 {
		return "the import's project"
	}
	return "project " + p.projects[p.proj[i]-1]
}

// ref is the input index of the task key names, or a placeholder noted
// in refs when that task is not read yet.
func (p *importPlan) ref(task, slot int32, key string) int32 {
	if j, ok := p.index[key]; ok {
		return j
	}
	p.refs = append(p.refs, forwardRef{task: task, slot: slot, key: key})
	return -2
}

// resolve fills in the references to tasks read later, and drops the key
// index.
func (p *importPlan) resolve() error {
	for _, r := range p.refs {
		j, ok := p.index[r.key]
		if !ok {
			if r.slot < 0 {
				return importer.At(p.where.at(r.task), errs.Invalidf("parent_id", "exists", "parent %s is not a task of this import", clip(r.key)))
			}
			return importer.At(p.where.at(r.task), errs.Invalidf("depends_on", "exists", "dependency %s is not a task of this import", clip(r.key)))
		}
		if r.slot < 0 {
			p.parent[r.task] = j
		} else {
			p.deps[r.slot] = j
		}
	}
	p.refs, p.index = nil, nil
	return nil
}

// edges is how many tasks task i waits on: its parent and dependencies.
func (p *importPlan) edges(i int32) int32 {
	n := int32(p.depAt[i+1] - p.depAt[i])
	if p.parent[i] >= 0 {
		n++
	}
	return n
}

// edge is the k-th task task i waits on, its parent first.
func (p *importPlan) edge(i, k int32) int32 {
	if p.parent[i] >= 0 {
		if k == 0 {
			return p.parent[i]
		}
		k--
	}
	return p.deps[int32(p.depAt[i])+k]
}

// orderTasks orders the tasks so that each follows its parent and its
// dependencies, keeping input order where the edges allow; a loop through
// parents or dependencies is refused as task_update refuses one (D27).
func (p *importPlan) orderTasks() error {
	const (
		unseen = iota
		onPath
		placed
	)
	n := int32(len(p.keys))
	state := make([]uint8, n)
	p.order = make([]int32, 0, n)
	// An explicit stack, which is also the path walked: a chain of
	// 100,000 dependencies must not recurse 100,000 deep.
	type frame struct{ task, next int32 }
	var stack []frame
	for root := int32(0); root < n; root++ {
		if state[root] != unseen {
			continue
		}
		stack = append(stack[:0], frame{root, 0})
		state[root] = onPath
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == p.edges(f.task) {
				state[f.task] = placed
				p.order = append(p.order, f.task)
				stack = stack[:len(stack)-1]
				continue
			}
			e := p.edge(f.task, f.next)
			f.next++
			switch state[e] {
			case onPath:
				path := make([]int32, len(stack))
				for k, fr := range stack {
					path[k] = fr.task
				}
				return p.loop(path, e)
			case unseen:
				state[e] = onPath
				stack = append(stack, frame{e, 0})
			}
		}
	}
	p.pos = make([]int32, n)
	for at, i := range p.order {
		p.pos[i] = int32(at)
	}
	return nil
}

// loop reports the loop that closes at task e of path.
func (p *importPlan) loop(path []int32, e int32) error {
	start := 0
	for i, t := range path {
		if t == e {
			start = i
		}
	}
	keys := make([]string, 0, len(path)-start+1)
	for _, t := range path[start:] {
		keys = append(keys, p.keys[t])
	}
	last := p.where.at(path[len(path)-1])
	return importer.At(last, errs.Conflictf(errs.CircularDependency, "parent_id and depends_on close a loop: %s → %s; a task cannot wait on itself, directly or through other tasks. Remove one of these links", strings.Join(keys, " → "), keys[0]).
		With("field", "depends_on").With("cycle", keys))
}
