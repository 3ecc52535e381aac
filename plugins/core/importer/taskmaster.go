package importer

import (
	"bytes"
	"encoding/json"
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
	top := Where{File: file, Line: 1}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(top, err)
	}
	list, ok := doc["tasks"]
	if !ok {
		var err error
		if list, err = tmTagged(top, doc, tag); err != nil {
			return nil, err
		}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list, &raws); err != nil {
		return nil, Refuse(lineAt(file, data, list), "tasks", "type", "tasks must be an array of task objects")
	}
	r := tmReader{file: file, data: data}
	for _, raw := range raws {
		if err := r.task(raw, ""); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// tmTagged picks the tag's task list from a tagged file.
func tmTagged(top Where, doc map[string]json.RawMessage, tag string) (json.RawMessage, error) {
	tags := make([]string, 0, len(doc))
	for k := range doc {
		tags = append(tags, k)
	}
	sort.Strings(tags)
	switch {
	case tag == "" && len(tags) == 1:
		tag = tags[0]
	case tag == "":
		tag = "master"
	}
	raw, ok := doc[tag]
	if !ok {
		return nil, Refuse(top, "tag", "exists", "the file has no tag %q (its tags: %s); name one with --tag", tag, strings.Join(tags, ", "))
	}
	var t struct {
		Tasks json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Tasks == nil {
		return nil, Refuse(top, tag+".tasks", "required", "tag %q holds no tasks array; a task-master file is {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}", tag)
	}
	return t.Tasks, nil
}

type tmReader struct {
	file string
	data []byte
	// from is where the search for the next task's bytes starts: tasks
	// come in file order, so each is found after the one before.
	from int
	// lines is the count of newlines before counted, so that each byte is
	// counted once however many tasks the file holds.
	counted, lines int
	out            []Task
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
	out := Task{Key: key, Where: w, Title: *t.Title, Parent: parent, Status: tmStatuses["pending"]}
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
	r.out = append(r.out, out)
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
	return Where{File: r.file, Line: 1 + r.lines}
}

// lineAt says on which line raw starts in data (the first occurrence).
func lineAt(file string, data, raw []byte) Where {
	if i := bytes.Index(data, raw); i >= 0 {
		return Where{File: file, Line: 1 + bytes.Count(data[:i], []byte{'\n'})}
	}
	return Where{File: file}
}

func clipRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func ptr[T any](v T) *T { return &v }
