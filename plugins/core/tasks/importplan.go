package tasks

import (
	"fmt"
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

	// What a lenient import changed, for its second pass to do the same
	// (few, in an input of any size): the reads it skipped, in order; the
	// tasks it renumbered (their key in the source); the tasks imported
	// without their parent; how many dependencies of a task it dropped.
	strict    bool
	cuts      bool
	skipped   []int32
	renamed   map[int32]string
	noParent  map[int32]bool
	droppedOf map[int32]int32
	// skippedKeys are the keys of the tasks skipped, so that a link to
	// one says so.
	skippedKeys map[string]bool
	rep         *importReport
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
// first (input order otherwise). Nothing is written. Strict, the first
// problem found in reading order is returned, naming where it is and the
// field; a reference to a task the input does not hold is found once all
// of it is read. Otherwise each problem is mended or its task skipped,
// and reported in rep: a text over its field's limit is cut (cuts: its
// whole text goes to the trail), a duplicate id renumbered, a reference
// to a task not imported dropped, the link that closes a loop dropped.
func planImport(project string, src importer.Source, strict, cuts bool, rep *importReport) (*importPlan, error) {
	if err := checkSlug("project", project); err != nil {
		return nil, err
	}
	p := &importPlan{index: map[string]int32{}, depAt: []uint32{0}, strict: strict, cuts: cuts && !strict, rep: rep}
	read := int32(-1)
	err := src.Scan(func(t importer.Task) error {
		read++
		if len(p.keys) >= maxImport {
			return importer.Refuse(t.Where, "tasks", "maxItems", "an import holds at most %d tasks; split the input", maxImport)
		}
		i := int32(len(p.keys))
		// What the reader mended or could not read (importer.Mend).
		if err := t.Refusal(); err != nil && p.strict {
			return err
		}
		if t.Skip != nil {
			p.skip(read, t.Key)
			rep.skipRead(t.Where, t.Key, t.Skip)
			return nil
		}
		for _, m := range t.Mended {
			rep.add(m.Where, t.Key, m.Field, m.Rule, m.Action, m.Fix)
		}
		if p.cuts {
			reportCut(rep, t.Where, t.Key, cutLong(&t))
		}
		_, _, deps, err := checkTask(project, &t)
		if err != nil {
			if p.strict {
				return importer.At(t.Where, err)
			}
			p.skip(read, t.Key)
			rep.skip(t.Where, t.Key, err)
			return nil
		}
		if j, dup := p.index[t.Key]; dup {
			if p.strict {
				return importer.Refuse(t.Where, "task_id", "uniqueItems", "task %s appears twice (first at %s); each task needs its own id", t.Key, p.where.at(j))
			}
			key := p.freeKey(t.Key)
			if p.renamed == nil {
				p.renamed = map[int32]string{}
			}
			p.renamed[i] = t.Key
			rep.add(t.Where, t.Key, "task_id", "uniqueItems",
				fmt.Sprintf("imported as %s: the id %s is already the task at %s; references to %s name that first task", key, clip(t.Key), p.where.at(j), clip(t.Key)),
				"give each task its own id in the source")
			t.Key = key
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
		if len(p.skipped) > 0 {
			return p, nil // nothing to import: the report says why
		}
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
	p.dropCut()
	return p, nil
}

// skip notes that the read-th task read, key, is skipped.
func (p *importPlan) skip(read int32, key string) {
	p.skipped = append(p.skipped, read)
	if key == "" {
		return
	}
	if p.skippedKeys == nil {
		p.skippedKeys = map[string]bool{}
	}
	p.skippedKeys[key] = true
}

// freeKey is the first of key-2, key-3, … that no task of the import has
// yet, for a duplicate id.
func (p *importPlan) freeKey(key string) string {
	for n := 2; ; n++ {
		k := fmt.Sprintf("%s-%d", key, n)
		if _, taken := p.index[k]; !taken {
			return k
		}
	}
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
// its task's, as task_create refuses one, before anything is written
// (strict); otherwise it drops the link and reports it.
func (p *importPlan) sameProjects() error {
	if p.proj == nil {
		return nil
	}
	for i := range int32(len(p.keys)) {
		if e := p.parent[i]; e >= 0 && p.proj[e] != p.proj[i] {
			if err := p.crossProject(i, e, "parent_id", "parent"); err != nil {
				return err
			}
			p.parent[i] = -1
			p.cutParent(i)
		}
		for slot := p.depAt[i]; slot < p.depAt[i+1]; slot++ {
			if e := p.deps[slot]; e >= 0 && p.proj[e] != p.proj[i] {
				if err := p.crossProject(i, e, "depends_on", "dependency"); err != nil {
					return err
				}
				p.deps[slot] = -1
			}
		}
	}
	return nil
}

// crossProject refuses task i's link to e in another project (strict), or
// reports that it is dropped.
func (p *importPlan) crossProject(i, e int32, field, what string) error {
	msg := fmt.Sprintf("%s %s is in %s, task %s in %s; a task links only tasks of its own project", what, clip(p.keys[e]), p.projectName(e), clip(p.keys[i]), p.projectName(i))
	if p.strict {
		return importer.At(p.where.at(i), errs.Invalidf(field, "sameProject", "%s", msg))
	}
	p.rep.add(p.where.at(i), p.keys[i], field, "sameProject", "dropped the link: "+msg,
		"import the two tasks into one project (--project), or remove the link in the source")
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
// index. A reference to a task the import does not hold is refused
// (strict) or dropped (-1) and reported.
func (p *importPlan) resolve() error {
	for _, r := range p.refs {
		j, ok := p.index[r.key]
		if !ok {
			w := p.where.at(r.task)
			absent := "which is not a task of this import"
			if p.skippedKeys[r.key] {
				absent = "which the import skipped (see its entry)"
			}
			if r.slot < 0 {
				if p.strict {
					return importer.At(w, errs.Invalidf("parent_id", "exists", "parent %s is not a task of this import", clip(r.key)))
				}
				p.parent[r.task] = -1
				p.cutParent(r.task)
				p.rep.add(w, p.keys[r.task], "parent_id", "exists",
					fmt.Sprintf("imported without its parent %s, %s", clip(r.key), absent),
					fmt.Sprintf("import %s in the same import, or remove the parent in the source", clip(r.key)))
				continue
			}
			if p.strict {
				return importer.At(w, errs.Invalidf("depends_on", "exists", "dependency %s is not a task of this import", clip(r.key)))
			}
			p.deps[r.slot] = -1
			p.rep.add(w, p.keys[r.task], "depends_on", "exists",
				fmt.Sprintf("dropped the dependency on %s, %s", clip(r.key), absent),
				fmt.Sprintf("import %s in the same import (is it in another tag, file or folder?), or remove the dependency in the source", clip(r.key)))
			continue
		}
		if r.slot < 0 {
			p.parent[r.task] = j
		} else {
			p.deps[r.slot] = j
		}
	}
	p.refs, p.index, p.skippedKeys = nil, nil, nil
	return nil
}

func (p *importPlan) cutParent(i int32) {
	if p.noParent == nil {
		p.noParent = map[int32]bool{}
	}
	p.noParent[i] = true
}

// edges is how many tasks task i waits on: its parent and dependencies.
func (p *importPlan) edges(i int32) int32 {
	n := int32(p.depAt[i+1] - p.depAt[i])
	if p.parent[i] >= 0 {
		n++
	}
	return n
}

// edge is the k-th task task i waits on, its parent first; -1 for a
// dependency the import dropped.
func (p *importPlan) edge(i, k int32) int32 {
	if p.parent[i] >= 0 {
		if k == 0 {
			if p.noParent[i] {
				return -1
			}
			return p.parent[i]
		}
		k--
	}
	return p.deps[int32(p.depAt[i])+k]
}

// orderTasks orders the tasks so that each follows its parent and its
// dependencies, keeping input order where the edges allow. A loop through
// parents or dependencies is refused as task_update refuses one (D27)
// when strict; otherwise the link that closes it is dropped and reported.
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
			k := f.next
			e := p.edge(f.task, k)
			f.next++
			if e < 0 {
				continue
			}
			switch state[e] {
			case onPath:
				path := make([]int32, len(stack))
				for k, fr := range stack {
					path[k] = fr.task
				}
				if p.strict {
					return p.loop(path, e)
				}
				p.dropLoopEdge(path, e, k)
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

// dropLoopEdge drops the k-th link of the last task of path, to e, which
// closes a loop, and reports it. A parent link is only marked here (the
// walk still counts it) and dropped by dropCut.
func (p *importPlan) dropLoopEdge(path []int32, e, k int32) {
	last := path[len(path)-1]
	keys := p.loopKeys(path, e)
	field := "depends_on"
	action := fmt.Sprintf("dropped the dependency on %s, which closes the loop %s → %s", clip(p.keys[e]), strings.Join(keys, " → "), keys[0])
	if p.parent[last] >= 0 && k == 0 {
		p.cutParent(last)
		field = "parent_id"
		action = fmt.Sprintf("imported without its parent %s, which closes the loop %s → %s", clip(p.keys[e]), strings.Join(keys, " → "), keys[0])
	} else {
		if p.parent[last] >= 0 {
			k--
		}
		p.deps[int32(p.depAt[last])+k] = -1
	}
	p.rep.add(p.where.at(last), p.keys[last], field, "acyclic", action, "remove one link of the loop in the source: a task cannot wait on itself, directly or through other tasks")
}

// dropCut applies what the walk dropped: the parents marked, and the
// dependencies at -1, counted per task for the second pass.
func (p *importPlan) dropCut() {
	for i := range p.noParent {
		p.parent[i] = -1
	}
	out := 0
	lo := uint32(0)
	for i := 0; i+1 < len(p.depAt); i++ {
		hi := p.depAt[i+1]
		for _, d := range p.deps[lo:hi] {
			if d >= 0 {
				p.deps[out] = d
				out++
			} else {
				if p.droppedOf == nil {
					p.droppedOf = map[int32]int32{}
				}
				p.droppedOf[int32(i)]++
			}
		}
		lo = hi
		p.depAt[i+1] = uint32(out)
	}
	p.deps = p.deps[:out]
}

// loopKeys are the keys of the loop that closes at task e of path.
func (p *importPlan) loopKeys(path []int32, e int32) []string {
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
	return keys
}

// loop reports the loop that closes at task e of path.
func (p *importPlan) loop(path []int32, e int32) error {
	keys := p.loopKeys(path, e)
	last := p.where.at(path[len(path)-1])
	return importer.At(last, errs.Conflictf(errs.CircularDependency, "parent_id and depends_on close a loop: %s → %s; a task cannot wait on itself, directly or through other tasks. Remove one of these links", strings.Join(keys, " → "), keys[0]).
		With("field", "depends_on").With("cycle", keys))
}
