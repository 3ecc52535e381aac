package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
}

// tmStatuses maps task-master's statuses onto cairn's: deferred work waits
// in backlog, pending work is ready (todo).
var tmStatuses = map[string]string{
	"pending":     "todo",
	"todo":        "todo",
	"in-progress": "in_progress",
	"review":      "review",
	"done":        "done",
	"deferred":    "backlog",
	"cancelled":   "cancelled",
	"blocked":     "blocked",
}

// tmPriorities maps task-master's priorities onto cairn's (medium is its
// default, as normal is cairn's).
var tmPriorities = map[string]string{
	"low": "low", "medium": "normal", "high": "high", "critical": "critical",
}

// TaskMasterBlockedReason is the blocked_reason of a task task-master
// marked blocked, which has none of its own: cairn requires one (D8).
const TaskMasterBlockedReason = "marked blocked in task-master"

// ReadTaskMaster reads a task-master tasks.json, named file in errors. Of a
// tagged file it reads tag (empty: "master", or the only tag there is).
func ReadTaskMaster(file string, data []byte, tag string) ([]Task, error) {
	src, err := openTaskMaster(file, bytes.NewReader(data), tag)
	if err != nil {
		return nil, err
	}
	return collect(scanFunc(src.scan))
}

// maxTMValue bounds one top-level task of a tasks.json with its subtasks,
// and any other single value of the file: the file is read one such value
// at a time, never whole.
const maxTMValue = 16 << 20

// tmFile is an opened tasks.json: the top-level key whose value holds the
// task list ("tasks", or the tag whose object holds it).
type tmFile struct {
	file   string
	r      io.ReadSeeker
	key    string
	tagged bool
}

// openTaskMaster checks that r holds one JSON object and picks the task
// list to read: a plain file's "tasks", else tag's (empty: "master", or the
// only tag there is). It walks the file's values without keeping them.
func openTaskMaster(file string, r io.ReadSeeker, tag string) (*tmFile, error) {
	top := Where{File: file, Line: 1}
	d, err := newTMDecoder(r)
	if err != nil {
		return nil, Refuse(top, "path", "readable", "cannot read the file: %v", err)
	}
	if err := d.delim('{'); err != nil {
		return nil, d.refuse(top, err, "a tasks.json is one JSON object: {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}")
	}
	// The tags are listed in a refusal; a file of very many keys is
	// listed in part, and the tag asked for is looked for in all of them.
	var tags []string
	plain, found, count := false, false, 0
	for d.dec.More() {
		k, err := d.key()
		if err != nil {
			return nil, d.refuse(Where{File: file}, err, "")
		}
		switch {
		case k == "tasks":
			plain = true
		case len(tags) < 100:
			tags = append(tags, k)
			fallthrough
		default:
			count++
			found = found || k == tag || (tag == "" && k == "master")
		}
		if err := d.skip(); err != nil {
			return nil, d.refuse(Where{File: file}, err, "")
		}
	}
	if err := d.delim('}'); err != nil {
		return nil, d.refuse(Where{File: file}, err, "")
	}
	if err := d.end(); err != nil {
		return nil, d.refuse(Where{File: file}, err, "")
	}
	if plain {
		return &tmFile{file: file, r: r, key: "tasks"}, nil
	}
	sort.Strings(tags)
	switch {
	case tag == "" && count == 1:
		tag, found = tags[0], true
	case tag == "":
		tag = "master"
	}
	if !found {
		listed := strings.Join(tags, ", ")
		if count > len(tags) {
			listed += fmt.Sprintf(" and %d more", count-len(tags))
		}
		return nil, Refuse(top, "tag", "exists", "the file has no tag %q (its tags: %s); name one with --tag", tag, listed)
	}
	return &tmFile{file: file, r: r, key: tag, tagged: true}, nil
}

// scan yields the tasks of the picked list, reading one top-level task
// (with its subtasks) at a time.
func (f *tmFile) scan(yield func(Task) error) error {
	top := Where{File: f.file, Line: 1}
	d, err := newTMDecoder(f.r)
	if err != nil {
		return Refuse(top, "path", "readable", "cannot read the file: %v", err)
	}
	noList := func() error {
		return Refuse(top, f.key+".tasks", "required", "tag %q holds no tasks array; a task-master file is {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}", f.key)
	}
	if err := d.delim('{'); err != nil {
		return d.refuse(top, err, "")
	}
	if err := d.seekKey(f.key); err != nil {
		return d.refuse(top, err, "")
	}
	if f.tagged {
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
	}
	at := d.line()
	if err := d.delim('['); err != nil {
		if errors.Is(err, errTMShape) {
			return Refuse(Where{File: f.file, Line: at}, "tasks", "type", "tasks must be an array of task objects")
		}
		return d.refuse(top, err, "")
	}
	for d.dec.More() {
		raw, line, err := d.value()
		if err != nil {
			return d.refuse(Where{File: f.file, Line: line}, err, "")
		}
		r := tmReader{file: f.file, data: raw, base: line - 1, yield: yield}
		if err := r.task(raw, ""); err != nil {
			return err
		}
	}
	return nil
}

type tmReader struct {
	file string
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
}

// task reads one task (parent empty) or subtask and its subtasks.
func (r *tmReader) task(raw json.RawMessage, parent string) error {
	w := r.locate(raw)
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
	key := id
	if parent != "" {
		key = parent + "." + id
	}
	if t.Title == nil {
		return Refuse(w, "title", "required", "task %s has no title", key)
	}
	out := Task{Key: key, Where: w, Title: *t.Title, Parent: parent, Status: tmStatuses["pending"], Source: key}
	if t.Status != "" { // absent is task-master's default, pending
		st, ok := tmStatuses[t.Status]
		if !ok {
			return Refuse(at("status"), "status", "enum", "task %s has status %q, which task-master does not have; use one of pending, in-progress, review, done, deferred, cancelled, blocked", key, t.Status)
		}
		out.Status = st
		if st == "blocked" {
			out.BlockedReason = ptr(TaskMasterBlockedReason)
		}
	}
	if t.Priority != "" {
		p, ok := tmPriorities[t.Priority]
		if !ok {
			return Refuse(at("priority"), "priority", "enum", "task %s has priority %q; use low, medium, high or critical", key, t.Priority)
		}
		out.Priority = ptr(p)
	}
	if d := tmDescription(t); d != "" {
		out.Description = ptr(d)
	}
	for i, dep := range t.Dependencies {
		d, err := tmID(at("dependencies"), "dependencies["+strconv.Itoa(i)+"]", dep)
		if err != nil {
			return err
		}
		if parent != "" && !strings.Contains(d, ".") && isNumber(dep) {
			d = parent + "." + d // a sibling subtask
		}
		out.DependsOn = append(out.DependsOn, d)
	}
	if err := r.yield(out); err != nil {
		return err
	}
	for _, sub := range t.Subtasks {
		if err := r.task(sub, key); err != nil {
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
	var s string
	if isNumber(raw) {
		s = string(raw)
	} else if err := json.Unmarshal(raw, &s); err != nil {
		return "", Refuse(w, field, "type", "%s must be a task id (a number such as 3, or \"3.1\"), not %s", field, clipRaw(raw))
	}
	for _, part := range strings.Split(s, ".") {
		if n, err := strconv.ParseUint(part, 10, 64); err != nil || n == 0 {
			return "", Refuse(w, field, "pattern", "%s %q is not a task id: use a positive number such as 3, or \"3.1\" for a subtask", field, s)
		}
	}
	return s, nil
}

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] >= '0' && raw[0] <= '9'
}

// locate finds raw's bytes in the file, after the task before it, and
// says on which line the task starts.
func (r *tmReader) locate(raw json.RawMessage) Where {
	i := bytes.Index(r.data[r.from:], raw)
	if i < 0 {
		return Where{File: r.file}
	}
	at := r.from + i
	r.from = at + 1
	r.lines += bytes.Count(r.data[r.counted:at], []byte{'\n'})
	r.counted = at
	return Where{File: r.file, Line: 1 + r.base + r.lines}
}

func clipRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func ptr[T any](v T) *T { return &v }
