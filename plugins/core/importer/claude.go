package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// Claude Code keeps a task list in a folder, ~/.claude/tasks/<list>/, one
// task a file (<id>.json, beside its .lock and .highwatermark): id,
// subject, description, activeForm, status (pending, in_progress,
// completed), blocks and blockedBy (ids of the list's tasks), owner and
// metadata. blockedBy is what the task waits on and blocks its inverse;
// Claude Code does not keep the two in step, so an import takes both.
type claudeTask struct {
	ID          json.RawMessage   `json:"id"`
	Subject     *string           `json:"subject"`
	Description string            `json:"description"`
	Status      string            `json:"status"`
	Blocks      []json.RawMessage `json:"blocks"`
	BlockedBy   []json.RawMessage `json:"blockedBy"`
	Owner       *string           `json:"owner"`
	Metadata    json.RawMessage   `json:"metadata"`
}

// claudeStatuses maps Claude Code's statuses onto cairn's.
var claudeStatuses = map[string]string{
	"":            "todo",
	"pending":     "todo",
	"in_progress": "in_progress",
	"completed":   "done",
	"cancelled":   "cancelled",
}

// ReadClaude reads every task of the Claude Code task list in the folder
// at dir, errors naming files as shown + their name; see openClaude.
func ReadClaude(dir, shown string) ([]Task, error) {
	l, err := openClaudeShown(dir, shown)
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.dir.Close() }()
	return collect(scanFunc(l.scan))
}

// claudeList is an opened task list: its folder, its task files in the
// order of their ids, and for each task the tasks whose blocks name it.
type claudeList struct {
	dir       *os.Root
	shown     string
	names     []string
	blockedBy map[string][]string
}

func openClaude(dir string) (*claudeList, error) { return openClaudeShown(dir, dir) }

// openClaudeShown opens the list in the folder at dir: its *.json files,
// each read once to order them by id and to gather their blocks. Only
// regular files of the folder are read (plainfile.go).
func openClaudeShown(dir, shown string) (*claudeList, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, Refuse(Where{File: shown}, "path", "readable", "cannot read the task list folder: %v", err)
	}
	l := &claudeList{dir: root, shown: shown, blockedBy: map[string][]string{}}
	if err := l.list(); err != nil {
		_ = root.Close()
		return nil, err
	}
	return l, nil
}

// list finds the task files, orders them by id (numerically when both
// are numbers) and gathers the inverse of every blocks.
func (l *claudeList) list() error {
	f, err := l.dir.Open(".")
	if err != nil {
		return Refuse(Where{File: l.shown}, "path", "readable", "cannot read the task list folder: %v", err)
	}
	defer func() { _ = f.Close() }()
	type named struct{ key, name string }
	var files []named
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			t, blocks, err := l.read(e.Name())
			if err != nil {
				if !parseError(err) {
					return err
				}
				// Skipped when scanned; ordered by the id it names, if any.
				files = append(files, named{t.Key, e.Name()})
				continue
			}
			for _, b := range blocks {
				if !slices.Contains(l.blockedBy[b], t.Key) {
					l.blockedBy[b] = append(l.blockedBy[b], t.Key)
				}
			}
			files = append(files, named{t.Key, e.Name()})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Refuse(Where{File: l.shown}, "path", "readable", "cannot read the task list folder: %v", err)
		}
	}
	sort.Slice(files, func(i, j int) bool {
		a, z := files[i], files[j]
		if claudeLess(a.key, z.key) || claudeLess(z.key, a.key) {
			return claudeLess(a.key, z.key)
		}
		return a.name < z.name
	})
	l.names = make([]string, len(files))
	for i, x := range files {
		l.names[i] = x.name
	}
	return nil
}

// claudeLess orders ids as Claude Code numbers them: numbers by value,
// before any other id, which sort as text.
func claudeLess(a, b string) bool {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		return na < nb
	case ea == nil || eb == nil:
		return ea == nil
	}
	return a < b
}

// scan yields the list's tasks in the order of their ids, each waiting on
// its blockedBy and on every task whose blocks name it.
func (l *claudeList) scan(yield func(Task) error) error {
	for _, name := range l.names {
		t, _, err := l.read(name)
		if err != nil {
			if !parseError(err) {
				return err
			}
			t = skippedTask(Where{File: path.Join(l.shown, name)}, t.Key, errors.Unwrap(err))
		}
		for _, b := range l.blockedBy[t.Key] {
			if !slices.Contains(t.DependsOn, b) {
				t.DependsOn = append(t.DependsOn, b)
			}
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	return nil
}

// read reads and parses one task file, and answers its blocks.
func (l *claudeList) read(name string) (Task, []string, error) {
	shown := path.Join(l.shown, name)
	f, fi, err := plainfile.Open(l.dir, name)
	if err != nil {
		return Task{}, nil, refuseFile(shown, err)
	}
	defer func() { _ = f.Close() }()
	if fi.Size() > maxLine {
		return Task{}, nil, Refuse(Where{File: shown}, "", "maxLength", "the file holds %d bytes, more than the %d a task file may", fi.Size(), maxLine)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLine+1))
	if err != nil {
		return Task{}, nil, Refuse(Where{File: shown}, "", "readable", "cannot read the file: %v", err)
	}
	if len(data) > maxLine {
		return Task{}, nil, Refuse(Where{File: shown}, "", "maxLength", "the file holds more than the %d bytes a task file may", maxLine)
	}
	t, blocks, err := parseClaude(shown, data)
	if err != nil {
		// A task file the list cannot read is one item of it: skipped
		// by a lenient import, named by the id it holds when it has one.
		return Task{Key: looseKey(data, "id")}, nil, parseFailed{err}
	}
	return t, blocks, nil
}

// parseFailed marks the error of a task file read whole but not
// understood, which a lenient import skips; an error reading the file
// (a symlink, too long) refuses the list.
type parseFailed struct{ error }

func (p parseFailed) Unwrap() error { return p.error }

func parseError(err error) bool {
	var p parseFailed
	return errors.As(err, &p)
}

// ParseClaudeFile reads one Claude Code task file, named file in errors,
// and answers the task and the ids its blocks names; a status Claude Code
// lacks is refused.
func ParseClaudeFile(file string, data []byte) (Task, []string, error) {
	t, blocks, err := parseClaude(file, data)
	if err == nil {
		err = t.Refusal()
	}
	if err != nil {
		return Task{}, nil, err
	}
	return t, blocks, nil
}

// parseClaude is ParseClaudeFile mending a status Claude Code lacks
// (Task.Mended).
func parseClaude(file string, data []byte) (Task, []string, error) {
	w := Where{File: file}
	var c claudeTask
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return Task{}, nil, jsonError(w, err)
	}
	if dec.More() {
		return Task{}, nil, Refuse(w, "", "format", "the file holds more than one JSON value; a task file is one task object")
	}
	id, ok := claudeID(c.ID)
	if !ok {
		return Task{}, nil, Refuse(w, "id", "required", "id is required, a string such as \"3\": it names the task for the blocks and blockedBy of the others")
	}
	if c.Subject == nil {
		return Task{}, nil, Refuse(w, "subject", "required", "task %s has no subject", clipText(id))
	}
	t := Task{Key: id, Source: id, Where: w, Title: *c.Subject, Assignee: c.Owner}
	if st, ok := claudeStatuses[c.Status]; ok {
		t.Status = st
	} else {
		t.mendStatus(Refuse(w, "status", "enum", "task %s has status %q; Claude Code's statuses are pending, in_progress and completed", clipText(id), clipText(c.Status)),
			w, c.Status, "pending, in_progress, completed")
	}
	if t.Assignee != nil && *t.Assignee == "" {
		t.Assignee = nil
	}
	for i, raw := range c.BlockedBy {
		d, ok := claudeID(raw)
		if !ok {
			return Task{}, nil, Refuse(w, "blockedBy["+strconv.Itoa(i)+"]", "type", "blockedBy holds task ids (strings such as \"3\"), not %s", clipRaw(raw))
		}
		t.DependsOn = append(t.DependsOn, d)
	}
	var blocks []string
	for i, raw := range c.Blocks {
		b, ok := claudeID(raw)
		if !ok {
			return Task{}, nil, Refuse(w, "blocks["+strconv.Itoa(i)+"]", "type", "blocks holds task ids (strings such as \"3\"), not %s", clipRaw(raw))
		}
		blocks = append(blocks, b)
	}
	if d := claudeDescription(&c); d != "" {
		t.Description = ptr(d)
	}
	return t, blocks, nil
}

// claudeID is an id as text: Claude Code writes strings, a number is read
// as its digits.
func claudeID(raw json.RawMessage) (string, bool) {
	if isNumber(raw) {
		return string(raw), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", false
	}
	return s, true
}

// claudeDescription is the description, then the metadata (any JSON) in
// a fenced block of its own: nothing of it is lost.
func claudeDescription(c *claudeTask) string {
	d := strings.TrimSpace(c.Description)
	meta := bytes.TrimSpace(c.Metadata)
	if len(meta) == 0 || string(meta) == "null" || string(meta) == "{}" {
		return d
	}
	var compact bytes.Buffer
	if json.Compact(&compact, meta) == nil {
		meta = compact.Bytes()
	}
	section := "## Metadata\n\n```json\n" + string(meta) + "\n```"
	if d == "" {
		return section
	}
	return d + "\n\n" + section
}
