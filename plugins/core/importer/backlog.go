package importer

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cairn-mcp/cairn/sdk/plainfile"
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

// ReadBacklog reads every task file of the Backlog.md board in the folder
// at dir, errors naming files as shown + their path in the folder; see
// openBacklog.
func ReadBacklog(dir, shown string) ([]Task, error) {
	src, err := openBacklogShown(dir, shown)
	if err != nil {
		return nil, err
	}
	defer func() { _ = src.dir.Close() }()
	return collect(scanFunc(src.scan))
}

// backlogBoard is an opened Backlog.md board: its task folder and the
// names of its task files in the order of their ids.
type backlogBoard struct {
	dir   *os.Root
	shown string
	names []string
}

func openBacklog(dir string) (*backlogBoard, error) { return openBacklogShown(dir, dir) }

// openBacklogShown opens the board in the folder at dir: the *.md files of
// its tasks folder, or of dir when it has none (drafts, archived and
// completed tasks are left out, as Backlog.md's board leaves them). Only
// regular files of the folder are read (plainfile.go): a symlinked tasks
// folder or task file, a hard-linked file, a FIFO or a device named
// task-*.md is refused. It reads every file once to order them by id; the
// board then holds their names, not their text.
func openBacklogShown(dir, shown string) (*backlogBoard, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, Refuse(Where{File: shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
	}
	b := &backlogBoard{dir: root, shown: shown}
	if st, err := root.Lstat("tasks"); err == nil && (st.IsDir() || st.Mode()&fs.ModeSymlink != 0) {
		sub, err := plainfile.OpenDir(root, "tasks")
		_ = root.Close()
		if err != nil {
			return nil, refuseFile(path.Join(shown, "tasks"), err)
		}
		b.dir, b.shown = sub, path.Join(shown, "tasks")
	}
	if err := b.list(); err != nil {
		_ = b.dir.Close()
		return nil, err
	}
	return b, nil
}

// list finds the task files and orders them by the ids they hold.
func (b *backlogBoard) list() error {
	f, err := b.dir.Open(".")
	if err != nil {
		return Refuse(Where{File: b.shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
	}
	defer func() { _ = f.Close() }()
	type named struct{ key, name string }
	var files []named
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || !strings.HasPrefix(strings.ToLower(e.Name()), "task-") {
				continue
			}
			t, err := b.read(e.Name())
			if err != nil {
				return err
			}
			files = append(files, named{t.Key, e.Name()})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Refuse(Where{File: b.shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
		}
	}
	sort.Slice(files, func(i, j int) bool {
		a, z := files[i], files[j]
		if idLess(a.key, z.key) || idLess(z.key, a.key) {
			return idLess(a.key, z.key)
		}
		return a.name < z.name
	})
	b.names = make([]string, len(files))
	for i, x := range files {
		b.names[i] = x.name
	}
	return nil
}

// scan yields the board's tasks in the order of their ids.
func (b *backlogBoard) scan(yield func(Task) error) error {
	for _, name := range b.names {
		t, err := b.read(name)
		if err != nil {
			return err
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	return nil
}

// read reads and parses one task file of the board.
func (b *backlogBoard) read(name string) (Task, error) {
	shown := path.Join(b.shown, name)
	f, fi, err := plainfile.Open(b.dir, name)
	if err != nil {
		return Task{}, refuseFile(shown, err)
	}
	defer func() { _ = f.Close() }()
	if fi.Size() > maxLine {
		return Task{}, Refuse(Where{File: shown}, "", "maxLength", "the file holds %d bytes, more than the %d a task file may", fi.Size(), maxLine)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLine+1))
	if err != nil {
		return Task{}, Refuse(Where{File: shown}, "", "readable", "cannot read the file: %v", err)
	}
	if len(data) > maxLine {
		return Task{}, Refuse(Where{File: shown}, "", "maxLength", "the file holds more than the %d bytes a task file may", maxLine)
	}
	return ParseBacklogFile(shown, data)
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
		t.Source = s
	case "created_date", "updated_date":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		if k == "created_date" {
			t.SourceCreated = backlogTime(s)
		} else {
			t.SourceUpdated = backlogTime(s)
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

// backlogTime renders a Backlog.md date ("2025-06-08 14:29", "2025-06-08")
// in RFC 3339; Backlog.md writes no zone, so it is read as UTC. A date it
// cannot read is left out.
func backlogTime(s string) string {
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return ""
}
