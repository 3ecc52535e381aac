package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// task-master's tasks.json: {"tasks":[…]} or, since its tags, {"<tag>":
// {"tasks":[…],"metadata":{…}}, …}. A task has a numeric id, title,
// description, details, testStrategy, status, priority, dependencies (ids
// of top-level tasks) and subtasks, whose ids count from 1 within their
// parent and whose numeric dependencies name sibling subtasks ("2" inside
// task 5 is 5.2; a dotted "3.1" names any subtask).
type tmTask struct {
	ID           json.RawMessage   `json:"id"`
	Title        *string           `json:"title"`
	Description  string            `json:"description"`
	Details      string            `json:"details"`
	TestStrategy string            `json:"testStrategy"`
	Status       string            `json:"status"`
	Priority     string            `json:"priority"`
	Dependencies []json.RawMessage `json:"dependencies"`
	Subtasks     []json.RawMessage `json:"subtasks"`
	// The times of newer task-master versions; only strings are read.
	CreatedAt any `json:"createdAt"`
	UpdatedAt any `json:"updatedAt"`
}

// tmStatuses maps task-master's statuses onto cairn's: deferred work waits
// in backlog, pending work is ready (todo).
var tmStatuses = map[string]string{
	"pending":     "todo",
	"todo":        "todo",
	"in-progress": "in_progress",
	"review":      "review",
	"done":        "done",
	"completed":   "done",
	"deferred":    "backlog",
	"cancelled":   "cancelled",
	"blocked":     "blocked",
}

// tmPriorities maps task-master's priorities onto cairn's (medium is its
// default, as normal is cairn's).
var tmPriorities = map[string]string{
	"low": "low", "medium": "normal", "high": "high", "critical": "critical",
}

// TaskMasterOtherTags heads the description's list of a task's
// dependencies on tasks of tags imported into other projects.
const TaskMasterOtherTags = "## Depends on tasks of other tags"

// TaskMasterBlockedReason is the blocked_reason of a task task-master
// marked blocked, which has none of its own: cairn requires one (D8).
const TaskMasterBlockedReason = "marked blocked in task-master"

// ReadTaskMaster reads a task-master tasks.json, named file in errors: a
// plain file's tasks, or of a tagged file the tags o names (none: every
// tag).
func ReadTaskMaster(file string, data []byte, o Options) ([]Task, error) {
	src, err := openTaskMaster(file, bytes.NewReader(data), o)
	if err != nil {
		return nil, err
	}
	return collect(scanFunc(src.scan))
}

// maxTMValue bounds one top-level task of a tasks.json with its subtasks,
// and any other single value of the file: the file is read one such value
// at a time, never whole.
const maxTMValue = 16 << 20

// tmMaster is task-master's default tag: its tasks keep their bare ids and
// go to the import's own project.
const tmMaster = "master"

// tmFile is an opened tasks.json: the task lists an import reads from it,
// in file order — a plain file's "tasks", or the picked tags'.
type tmFile struct {
	file  string
	r     io.ReadSeeker
	plain bool
	lists []tmList
	// split sends each tag but master to a project of its own.
	split bool
	// tags are the file's tags that hold a task list, read or not, and
	// holders names, for each id of their tasks and subtasks, the tags
	// that hold it (indexes into tags): a dependency on an id its own tag
	// lacks names the task of another tag (docs/decisions.md D41). Nil
	// when one tag is named.
	tags    []string
	holders map[string][]uint16
}

// tmList is one task list of a tasks.json: tag is "" for a plain file's.
type tmList struct {
	tag string
}

// key is the import's key of the task id of tag: the id itself for a
// plain file and the master tag, "<tag>:<id>" for another tag, so that
// the tags' ids, which repeat, stay apart.
func tmKey(tag, id string) string {
	if tag != "" && tag != tmMaster {
		return tag + ":" + id
	}
	return id
}

// key is the import's key of the task id of list li.
func (f *tmFile) key(li int, id string) string { return tmKey(f.lists[li].tag, id) }

// project is the project of list li's tasks: when tags are split, a
// tag's but master's is the one named after it (ProjectSlug); the others'
// the import's own.
func (f *tmFile) project(li int) string { return f.tagProject(f.lists[li].tag) }

func (f *tmFile) tagProject(tag string) string {
	if f.split && tag != "" && tag != tmMaster {
		return ProjectSlug(tag)
	}
	return ""
}

// dependency is the key of the task dependency id of a task of list li
// names: its own tag's task when it has one, else the task with that id
// in master, else in the first tag holding it (task-master spells a
// dependency across tags as the bare id of the other tag's task). An id
// no tag holds, or held by a tag not read, stays its own tag's, for the
// import to report.
// The tag is told too ("" for its own).
func (f *tmFile) dependency(li int, id string) (key, tag string) {
	own := f.lists[li].tag
	in := f.holders[id]
	if len(in) == 0 || slices.ContainsFunc(in, func(h uint16) bool { return f.tags[h] == own }) {
		return f.key(li, id), ""
	}
	to := f.tags[in[0]]
	if slices.ContainsFunc(in, func(h uint16) bool { return f.tags[h] == tmMaster }) {
		to = tmMaster
	}
	if !slices.ContainsFunc(f.lists, func(l tmList) bool { return l.tag == to }) {
		return f.key(li, id), ""
	}
	return tmKey(to, id), to
}

// maxTMLists bounds the tags one import reads (holders' indexes).
const maxTMLists = 1 << 16

// openTaskMaster checks that r holds one JSON object and picks the task
// lists to read: a plain file's "tasks", else the tags named (none: every
// tag whose value holds a task list). It walks the file's values without
// keeping them, but for the ids of the tags' tasks unless one tag is
// named.
func openTaskMaster(file string, r io.ReadSeeker, o Options) (*tmFile, error) {
	tags := slices.DeleteFunc(slices.Clone(o.Tags), func(t string) bool { return t == "" })
	top := Where{File: file, Line: 1}
	d, err := newTMDecoder(r)
	if err != nil {
		return nil, Refuse(top, "path", "readable", "cannot read the file: %v", err)
	}
	if err := d.delim('{'); err != nil {
		return nil, d.refuse(top, err, "a tasks.json is one JSON object: {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}")
	}
	f := &tmFile{file: file, r: r, split: o.TagProjects}
	// Ids are gathered unless exactly one tag is named: with one list
	// read, no dependency can cross to another.
	gather := len(tags) != 1
	if gather {
		f.holders = map[string][]uint16{}
	}
	// The tags are listed in a refusal; a file of very many keys is
	// listed in part.
	var seen []string
	count := 0
	for d.dec.More() {
		k, err := d.key()
		if err != nil {
			return nil, d.refuse(Where{File: file}, err, "")
		}
		if k == "tasks" {
			f.plain = true
		} else {
			if len(seen) < 100 {
				seen = append(seen, k)
			}
			count++
		}
		picked := k != "tasks" && (len(tags) == 0 || slices.Contains(tags, k))
		switch {
		case k != "tasks" && gather:
			if len(f.tags) >= maxTMLists {
				return nil, Refuse(top, "tag", "maxItems", "the file has more than %d tags; name the ones to import with --tag", maxTMLists)
			}
			ti := uint16(len(f.tags))
			list, err := d.tagIDs(func(id string) {
				if h := f.holders[id]; len(h) == 0 || h[len(h)-1] != ti {
					f.holders[id] = append(h, ti)
				}
			})
			if err != nil {
				return nil, d.refuse(Where{File: file}, err, "")
			}
			if list {
				f.tags = append(f.tags, k)
			}
			// A key whose value holds no task list is not a tag, unless
			// it was named: then reading it says what is wrong.
			if picked && (list || len(tags) > 0) {
				f.lists = append(f.lists, tmList{tag: k})
			}
		case picked:
			f.lists = append(f.lists, tmList{tag: k})
			fallthrough
		default:
			if err := d.skip(); err != nil {
				return nil, d.refuse(Where{File: file}, err, "")
			}
		}
	}
	if err := d.delim('}'); err != nil {
		return nil, d.refuse(Where{File: file}, err, "")
	}
	if err := d.end(); err != nil {
		return nil, d.refuse(Where{File: file}, err, "")
	}
	if f.plain {
		f.lists, f.tags, f.holders = []tmList{{}}, nil, nil
		return f, nil
	}
	listed := func() string {
		sort.Strings(seen)
		s := strings.Join(seen, ", ")
		if count > len(seen) {
			s += fmt.Sprintf(" and %d more", count-len(seen))
		}
		return s
	}
	for _, tag := range tags {
		if !slices.ContainsFunc(f.lists, func(l tmList) bool { return l.tag == tag }) {
			return nil, Refuse(top, "tag", "exists", "the file has no tag %q (its tags: %s); name one with --tag", tag, listed())
		}
	}
	if len(f.lists) == 0 {
		return nil, Refuse(top, "tasks", "required", "the file holds no task list: a task-master file is {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}} (its keys: %s)", listed())
	}
	if len(f.lists) == 1 {
		f.tags, f.holders = nil, nil
	}
	return f, nil
}

// scan yields the tasks of the picked lists in file order, reading one
// top-level task (with its subtasks) at a time.
func (f *tmFile) scan(yield func(Task) error) error {
	top := Where{File: f.file, Line: 1}
	d, err := newTMDecoder(f.r)
	if err != nil {
		return Refuse(top, "path", "readable", "cannot read the file: %v", err)
	}
	if err := d.delim('{'); err != nil {
		return d.refuse(top, err, "")
	}
	if f.plain {
		if err := d.seekKey("tasks"); err != nil {
			return d.refuse(top, err, "")
		}
		return f.readList(d, 0, yield)
	}
	next := 0
	for next < len(f.lists) && d.dec.More() {
		k, err := d.key()
		if err != nil {
			return d.refuse(top, err, "")
		}
		if k != f.lists[next].tag {
			if err := d.skip(); err != nil {
				return d.refuse(top, err, "")
			}
			continue
		}
		if err := f.readTag(d, next, yield); err != nil {
			return err
		}
		next++
	}
	if next < len(f.lists) {
		return Refuse(top, "path", "stable", "tag %q is gone: the file changed while it was being imported; run the import again", f.lists[next].tag)
	}
	return nil
}

// readTag reads the object of list li's tag: its task list, and past the
// rest of its keys (metadata).
func (f *tmFile) readTag(d *tmDecoder, li int, yield func(Task) error) error {
	top := Where{File: f.file, Line: 1}
	tag := f.lists[li].tag
	noList := func() error {
		return Refuse(top, tag+".tasks", "required", "tag %q holds no tasks array; a task-master file is {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}", tag)
	}
	if err := d.delim('{'); err != nil {
		if errors.Is(err, errTMShape) {
			return noList()
		}
		return d.refuse(top, err, "")
	}
	if err := d.seekKey("tasks"); err != nil {
		if errors.Is(err, errTMNoKey) {
			return noList()
		}
		return d.refuse(top, err, "")
	}
	if err := f.readList(d, li, yield); err != nil {
		return err
	}
	for d.dec.More() {
		if _, err := d.key(); err != nil {
			return d.refuse(top, err, "")
		}
		if err := d.skip(); err != nil {
			return d.refuse(top, err, "")
		}
	}
	if err := d.delim('}'); err != nil {
		return d.refuse(top, err, "")
	}
	return nil
}

// readList reads the task array the decoder is at, one top-level task at
// a time.
func (f *tmFile) readList(d *tmDecoder, li int, yield func(Task) error) error {
	at := d.line()
	if err := d.delim('['); err != nil {
		if errors.Is(err, errTMShape) {
			return Refuse(Where{File: f.file, Line: at}, "tasks", "type", "tasks must be an array of task objects")
		}
		return d.refuse(Where{File: f.file, Line: 1}, err, "")
	}
	for d.dec.More() {
		raw, line, err := d.value()
		if err != nil {
			return d.refuse(Where{File: f.file, Line: line}, err, "")
		}
		r := tmReader{f: f, list: li, data: raw, base: line - 1, yield: yield}
		if err := r.task(raw, ""); err != nil {
			return err
		}
	}
	if err := d.delim(']'); err != nil {
		return d.refuse(Where{File: f.file, Line: d.line()}, err, "")
	}
	return nil
}

type tmReader struct {
	f    *tmFile
	list int
	// data is one top-level task, whose first line is line base+1 of
	// the file.
	data []byte
	base int
	// from is where the search for the next task's bytes starts: tasks
	// come in file order, so each is found after the one before.
	from int
	// lines is the count of newlines before counted, so that each byte is
	// counted once however many tasks the file holds.
	counted, lines int
	yield          func(Task) error
	// stopped is the error yield answered, which ends the read.
	stopped error
}

// task reads one task (parent empty) or subtask and its subtasks; parent
// is the id of a subtask's task in its list ("5"), unqualified.
//
// A task it cannot read (a field of the wrong type, no id or title) is
// yielded skipped, with its subtasks, when itemError says the rest of the
// file can be read; an unknown status or priority is mended.
func (r *tmReader) task(raw json.RawMessage, parent string) error {
	w := r.locate(raw)
	err := r.readTask(w, raw, parent)
	if err == nil || r.stopped != nil || !itemError(err) {
		return err
	}
	key := looseKey(raw, "id")
	if key != "" {
		if parent != "" {
			key = parent + "." + key
		}
		key = r.f.key(r.list, key)
	}
	return r.emit(skippedTask(w, key, err))
}

// emit yields t, noting an error of the import's so that it is not
// taken for one of the file's.
func (r *tmReader) emit(t Task) error {
	err := r.yield(t)
	if err != nil {
		r.stopped = err
	}
	return err
}

// readTask reads the task at w and its subtasks; see task.
func (r *tmReader) readTask(w Where, raw json.RawMessage, parent string) error {
	var t tmTask
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&t); err != nil {
		return jsonError(w, err)
	}
	// at names the line of one of the task's fields, for its errors.
	at := func(field string) Where {
		if i := bytes.Index(raw, []byte(`"`+field+`"`)); i >= 0 && w.Line > 0 {
			return Where{File: w.File, Line: w.Line + bytes.Count(raw[:i], []byte{'\n'})}
		}
		return w
	}
	id, err := tmID(at("id"), "id", t.ID)
	if err != nil {
		return err
	}
	if parent != "" {
		id = parent + "." + id
	}
	key := r.f.key(r.list, id)
	if t.Title == nil {
		return Refuse(w, "title", "required", "task %s has no title", key)
	}
	out := Task{Key: key, Source: key, Where: w, Title: *t.Title, Project: r.f.project(r.list), Status: tmStatuses["pending"]}
	if parent != "" {
		out.Parent = r.f.key(r.list, parent)
	}
	if s, ok := t.CreatedAt.(string); ok {
		out.SourceCreated = sourceTime(s)
	}
	if s, ok := t.UpdatedAt.(string); ok {
		out.SourceUpdated = sourceTime(s)
	}
	if t.Status != "" { // absent is task-master's default, pending
		st, ok := tmStatuses[t.Status]
		switch {
		case !ok:
			out.mendStatus(Refuse(at("status"), "status", "enum", "task %s has status %q, which task-master does not have; use one of pending, in-progress, review, done, completed, deferred, cancelled, blocked", key, t.Status),
				at("status"), t.Status, "pending, in-progress, review, done, deferred, cancelled, blocked")
		case st == "blocked":
			out.Status = st
			out.BlockedReason = ptr(TaskMasterBlockedReason)
		default:
			out.Status = st
		}
	}
	if t.Priority != "" {
		p, ok := tmPriorities[t.Priority]
		if ok {
			out.Priority = ptr(p)
		} else {
			out.mendPriority(Refuse(at("priority"), "priority", "enum", "task %s has priority %q; use low, medium, high or critical", key, t.Priority),
				at("priority"), t.Priority, "low, medium, high, critical")
		}
	}
	// A dependency on a task of a tag in another project, which cairn
	// cannot link (a task depends only on tasks of its own project), is
	// kept as a line of the description.
	var elsewhere []string
	for i, dep := range t.Dependencies {
		d, err := tmID(at("dependencies"), "dependencies["+strconv.Itoa(i)+"]", dep)
		if err != nil {
			return err
		}
		if parent != "" && !strings.Contains(d, ".") && isNumber(dep) {
			d = parent + "." + d // a sibling subtask
		}
		dk, tag := r.f.dependency(r.list, d)
		if tag != "" && r.f.tagProject(tag) != out.Project {
			elsewhere = append(elsewhere, fmt.Sprintf("- task %s of tag %s", d, tag))
			continue
		}
		out.DependsOn = append(out.DependsOn, dk)
	}
	d := tmDescription(t)
	if len(elsewhere) > 0 {
		d = strings.TrimSpace(d + "\n\n" + TaskMasterOtherTags + "\n\n" + strings.Join(elsewhere, "\n"))
	}
	if d != "" {
		out.Description = ptr(d)
	}
	if err := r.emit(out); err != nil {
		return err
	}
	for _, sub := range t.Subtasks {
		if err := r.task(sub, id); err != nil {
			return err
		}
	}
	return nil
}

// tmDescription joins what task-master splits: the description, then the
// details and the test strategy under headings of their own.
func tmDescription(t tmTask) string {
	parts := []string{}
	if s := strings.TrimSpace(t.Description); s != "" {
		parts = append(parts, s)
	}
	if s := strings.TrimSpace(t.Details); s != "" {
		parts = append(parts, "## Details\n\n"+s)
	}
	if s := strings.TrimSpace(t.TestStrategy); s != "" {
		parts = append(parts, "## Test strategy\n\n"+s)
	}
	return strings.Join(parts, "\n\n")
}

// tmID reads an id: a positive whole number, or a string of them joined
// by dots.
func tmID(w Where, field string, raw json.RawMessage) (string, error) {
	s, ok := tmIDText(raw)
	if ok {
		return s, nil
	}
	if s == "" {
		return "", Refuse(w, field, "type", "%s must be a task id (a number such as 3, or \"3.1\"), not %s", field, clipRaw(raw))
	}
	return "", Refuse(w, field, "pattern", "%s %q is not a task id: use a positive number such as 3, or \"3.1\" for a subtask", field, s)
}

// tmIDText is the text of an id and whether it is one; the text is empty
// when raw is neither a number nor a string.
func tmIDText(raw json.RawMessage) (string, bool) {
	var s string
	if isNumber(raw) {
		s = string(raw)
	} else if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	for _, part := range strings.Split(s, ".") {
		if n, err := strconv.ParseUint(part, 10, 64); err != nil || n == 0 {
			return s, false
		}
	}
	return s, true
}

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] >= '0' && raw[0] <= '9'
}

// locate finds raw's bytes in the file, after the task before it, and
// says on which line the task starts.
func (r *tmReader) locate(raw json.RawMessage) Where {
	i := bytes.Index(r.data[r.from:], raw)
	if i < 0 {
		return Where{File: r.f.file}
	}
	at := r.from + i
	r.from = at + 1
	r.lines += bytes.Count(r.data[r.counted:at], []byte{'\n'})
	r.counted = at
	return Where{File: r.f.file, Line: 1 + r.base + r.lines}
}

func clipRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func ptr[T any](v T) *T { return &v }
