package importer

import (
	"bytes"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Backlog.md keeps one file per task, backlog/tasks/task-<id> - <title>.md:
// YAML frontmatter (id, title, status, assignee, labels, dependencies,
// priority, parent_task_id, dates) and a markdown body whose sections
// (Description, Acceptance Criteria, Implementation Plan, Implementation
// Notes) Backlog.md fences with HTML comments.

// backlogStatuses maps Backlog.md's default statuses, and the names of
// cairn's own a board may be configured with, onto cairn's.
var backlogStatuses = map[string]string{
	"to do": "todo", "todo": "todo",
	"in progress": "in_progress", "in_progress": "in_progress",
	"done": "done", "backlog": "backlog", "blocked": "blocked",
	"review": "review", "in review": "review",
	"cancelled": "cancelled", "canceled": "cancelled",
}

// BacklogBlockedReason is the blocked_reason of a task Backlog.md marked
// blocked, which has none of its own: cairn requires one (D8).
const BacklogBlockedReason = "marked blocked in Backlog.md"

// backlogMarker matches the comment lines Backlog.md fences sections with.
var backlogMarker = regexp.MustCompile(`(?m)^[ \t]*<!--\s*(?:SECTION:[A-Z_]+|AC|DOD):(?:BEGIN|END)\s*-->[ \t]*\r?\n?`)

// ReadBacklog reads every task file of a Backlog.md board in fsys: the
// *.md files of dir/tasks, or of dir when it has no tasks folder (drafts,
// archived and completed tasks are left out, as Backlog.md's board leaves
// them). Errors name the file's path as shown (shown + the file's name).
func ReadBacklog(fsys fs.FS, dir, shown string) ([]Task, error) {
	if st, err := fs.Stat(fsys, path.Join(dir, "tasks")); err == nil && st.IsDir() {
		dir, shown = path.Join(dir, "tasks"), path.Join(shown, "tasks")
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, Refuse(Where{File: shown}, "", "readable", "cannot read the Backlog.md folder: %v", err)
	}
	var out []Task
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || !strings.HasPrefix(strings.ToLower(e.Name()), "task-") {
			continue
		}
		w := Where{File: path.Join(shown, e.Name())}
		if info, err := e.Info(); err == nil && info.Size() > maxLine {
			return nil, Refuse(w, "", "maxLength", "the file holds %d bytes, more than the %d a task file may", info.Size(), maxLine)
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, Refuse(w, "", "readable", "cannot read the file: %v", err)
		}
		t, err := ParseBacklogFile(w.File, data)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return idLess(out[i].Key, out[j].Key) })
	return out, nil
}

// ParseBacklogFile reads one Backlog.md task file, named file in errors.
func ParseBacklogFile(file string, data []byte) (Task, error) {
	front, body, line, err := splitFrontmatter(file, data)
	if err != nil {
		return Task{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return Task{}, Refuse(Where{File: file, Line: 2}, "", "format", "the frontmatter is not YAML: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Task{}, Refuse(Where{File: file, Line: 1}, "", "format", "the frontmatter must be a YAML mapping of fields (id, title, status, …)")
	}
	t := Task{Where: Where{File: file}}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		w := Where{File: file, Line: line + v.Line - 1}
		if err := t.backlogField(w, k, v); err != nil {
			return Task{}, err
		}
	}
	switch {
	case t.Key == "":
		return Task{}, Refuse(Where{File: file, Line: 1}, "id", "required", "the frontmatter has no id (task-<n>)")
	case t.Title == "":
		return Task{}, Refuse(Where{File: file, Line: 1}, "title", "required", "the frontmatter has no title")
	}
	if d := backlogBody(body); d != "" {
		t.Description = &d
	}
	return t, nil
}

// backlogField reads one frontmatter field into t. Fields cairn has no
// place for (reporter, dates, milestone, ordinal, …) are left out.
func (t *Task) backlogField(w Where, k string, v *yaml.Node) error {
	switch k {
	case "id":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		if t.Key, err = backlogID(w, k, s); err != nil {
			return err
		}
	case "title":
		s, err := scalar(w, k, v)
		t.Title = s
		return err
	case "status":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		st, ok := backlogStatuses[strings.ToLower(strings.TrimSpace(s))]
		if !ok {
			return Refuse(w, k, "enum", "status %q is not one cairn knows; use To Do, In Progress, Done, Backlog, Blocked, Review or Cancelled", s)
		}
		t.Status = st
		if st == "blocked" {
			t.BlockedReason = ptr(BacklogBlockedReason)
		}
	case "priority":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		p, ok := tmPriorities[strings.ToLower(s)]
		if !ok {
			return Refuse(w, k, "enum", "priority %q is not low, medium, high or critical", s)
		}
		t.Priority = ptr(p)
	case "assignee":
		list, err := scalars(w, k, v)
		if err != nil || len(list) == 0 {
			return err
		}
		t.Assignee = ptr(strings.TrimPrefix(list[0], "@"))
	case "labels":
		list, err := scalars(w, k, v)
		t.Labels = list
		return err
	case "dependencies":
		list, err := scalars(w, k, v)
		if err != nil {
			return err
		}
		for _, d := range list {
			id, err := backlogID(w, k, d)
			if err != nil {
				return err
			}
			t.DependsOn = append(t.DependsOn, id)
		}
	case "parent_task_id", "parent":
		s, err := scalar(w, k, v)
		if err != nil || s == "" {
			return err
		}
		t.Parent, err = backlogID(w, k, s)
		return err
	}
	return nil
}

// backlogID normalizes a Backlog.md id: "task-7", "TASK-7" and "7" are
// one task, keyed "task-7"; subtasks are "task-7.1".
func backlogID(w Where, field, s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	n := strings.TrimPrefix(s, "task-")
	for _, part := range strings.Split(n, ".") {
		if v, err := strconv.ParseUint(part, 10, 64); err != nil || v == 0 {
			return "", Refuse(w, field, "pattern", "%s %q is not a task id such as task-7 or task-7.1", field, s)
		}
	}
	return "task-" + n, nil
}

func scalar(w Where, field string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", Refuse(w, field, "type", "%s must be a single value", field)
	}
	return v.Value, nil
}

// scalars reads a list of values, or one value as a list of one.
func scalars(w Where, field string, v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Value == "" {
			return nil, nil
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, Refuse(Where{File: w.File, Line: w.Line + c.Line - v.Line}, field, "type", "%s must list plain values", field)
			}
			out = append(out, c.Value)
		}
		return out, nil
	default:
		return nil, Refuse(w, field, "type", "%s must be a list of values", field)
	}
}

// splitFrontmatter cuts a task file into its frontmatter and body and says
// on which line of the file the frontmatter's first line is.
func splitFrontmatter(file string, data []byte) (front, body []byte, line int, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		rest, ok = bytes.CutPrefix(data, []byte("---\r\n"))
	}
	if !ok {
		return nil, nil, 0, Refuse(Where{File: file, Line: 1}, "", "format", "a Backlog.md task file starts with --- and its YAML frontmatter")
	}
	for i := 0; i < len(rest); {
		end := bytes.IndexByte(rest[i:], '\n')
		next := len(rest)
		if end >= 0 {
			next = i + end + 1
		}
		if l := bytes.TrimRight(rest[i:next], "\r\n"); string(l) == "---" {
			return rest[:i], rest[next:], 2, nil
		}
		i = next
	}
	return nil, nil, 0, Refuse(Where{File: file, Line: 1}, "", "format", "the frontmatter has no closing ---")
}

// backlogBody is the task's markdown body without Backlog.md's section
// fences and without the Description heading that opens it: the rest
// (acceptance criteria, plan, notes) keeps its headings.
func backlogBody(body []byte) string {
	s := backlogMarker.ReplaceAllString(string(body), "")
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimPrefix(s, "## Description"))
	return s
}

// idLess orders ids such as task-2 < task-10 < task-10.1 by their numbers.
func idLess(a, b string) bool {
	pa := strings.Split(strings.TrimPrefix(a, "task-"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "task-"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.ParseUint(pa[i], 10, 64)
		y, _ := strconv.ParseUint(pb[i], 10, 64)
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
