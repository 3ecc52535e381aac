package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// Backlog.md keeps one file per task, backlog/<folder>/<id> - <title>.md:
// YAML frontmatter (id, title, status, assignee, labels, dependencies,
// priority, parent_task_id, dates) and a markdown body whose sections
// (Description, Acceptance Criteria, Implementation Plan, Implementation
// Notes) Backlog.md fences with HTML comments. The folder says where the
// task stands (docs/decisions.md D41): tasks/ holds the board, whose
// status is the file's; drafts/ the drafts, which are cairn's backlog;
// completed/ the done tasks; archive/tasks/ the tasks Backlog.md archived,
// which cairn imports as cancelled, so that a parent or a dependency in any
// of them is found.

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

// The expressions here compile on first use, not in package init, which
// every cairn process runs (docs/decisions.md D46).

// backlogMarker matches the comment lines Backlog.md fences sections with.
var backlogMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*<!--\s*(?:SECTION:[A-Z_]+|AC|DOD):(?:BEGIN|END)\s*-->[ \t]*\r?\n?`)
})

// backlogFolders are the folders of a board that hold tasks, in the order
// they are read, and the status each gives its tasks (empty: the file's).
var backlogFolders = []struct{ path, status string }{
	{"tasks", ""},
	{"drafts", "backlog"},
	{"completed", "done"},
	{"archive/tasks", "cancelled"},
}

// ReadBacklog reads every task file of the Backlog.md board in the folder
// at dir, errors naming files as shown + their path in the folder; see
// openBacklog.
func ReadBacklog(dir, shown string) ([]Task, error) {
	src, err := openBacklogShown(dir, shown)
	if err != nil {
		return nil, err
	}
	defer func() { _ = src.close() }()
	return collect(scanFunc(src.scan))
}

// backlogBoard is an opened Backlog.md board: its task folders and the
// files of its tasks in the order of their ids.
type backlogBoard struct {
	ids     backlogIDs
	folders []*backlogFolder
	files   []backlogFile
	// decisionsDir is the board's decisions/ folder, nil when it has
	// none; hasDecisions says whether it holds a decision file, for which
	// the board yields the Decisions task after its own.
	decisionsDir *backlogFolder
	hasDecisions bool
}

// backlogFolder is one opened task folder of a board.
type backlogFolder struct {
	dir    *os.Root
	shown  string
	status string
}

// backlogFile names one task file: its folder (an index in folders) and
// its name there.
type backlogFile struct {
	folder int
	name   string
}

func openBacklog(dir string) (*backlogBoard, error) { return openBacklogShown(dir, dir) }

// openBacklogShown opens the board in the folder at dir: the prefix of its
// config.yml and the task files of its folders (backlogFolders), or, when
// it has none of them, the task files of dir itself (a tasks/ folder given
// alone). Only regular files of the folder are read (plainfile.go): a
// symlinked folder or task file, a hard-linked file, a FIFO or a device is
// refused. It reads every file once to order them by id; the board then
// holds their names, not their text.
func openBacklogShown(dir, shown string) (*backlogBoard, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, Refuse(Where{File: shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
	}
	if inner, found, err := repositoryBoard(root, shown); err != nil {
		_ = root.Close()
		return nil, err
	} else if found {
		_ = root.Close()
		root, shown = inner, path.Join(shown, "backlog")
	}
	b := &backlogBoard{}
	ok := false
	defer func() {
		if !ok {
			_ = b.close()
		}
	}()
	if b.ids, err = readBacklogConfig(root, shown); err != nil {
		_ = root.Close()
		return nil, err
	}
	for _, f := range backlogFolders {
		sub, found, err := openBacklogFolder(root, shown, f.path)
		if err != nil {
			_ = root.Close()
			return nil, err
		}
		if found {
			b.folders = append(b.folders, &backlogFolder{dir: sub, shown: path.Join(shown, f.path), status: f.status})
		}
	}
	sub, found, err := openBacklogFolder(root, shown, "decisions")
	if err != nil {
		_ = root.Close()
		return nil, err
	}
	if found {
		b.decisionsDir = &backlogFolder{dir: sub, shown: path.Join(shown, "decisions")}
	}
	if len(b.folders) == 0 {
		b.folders = []*backlogFolder{{dir: root, shown: shown}}
	} else {
		_ = root.Close()
	}
	if err := b.list(); err != nil {
		return nil, err
	}
	if b.decisionsDir != nil {
		names, err := folderNames(b.decisionsDir)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			b.hasDecisions = b.hasDecisions || strings.HasPrefix(strings.ToLower(n), "decision-")
		}
	}
	ok = true
	return b, nil
}

// repositoryBoard opens the backlog/ folder of a repository given whole
// (Backlog.md keeps its board there): when root holds no board of its own
// (no config.yml, no task folder) but a backlog/ folder.
func repositoryBoard(root *os.Root, shown string) (*os.Root, bool, error) {
	for _, own := range []string{"config.yml", "tasks", "drafts", "completed", "archive", "decisions"} {
		if _, err := root.Lstat(own); err == nil {
			return nil, false, nil
		}
	}
	return openBacklogFolder(root, shown, "backlog")
}

// openBacklogFolder opens the folder at rel (slash-separated) in root, one
// element at a time so that each is refused if it is a symlink; found is
// false when it does not exist.
func openBacklogFolder(root *os.Root, shown, rel string) (*os.Root, bool, error) {
	cur := root
	done := ""
	for _, elem := range strings.Split(rel, "/") {
		done = path.Join(done, elem)
		if _, err := cur.Lstat(elem); errors.Is(err, fs.ErrNotExist) {
			if cur != root {
				_ = cur.Close()
			}
			return nil, false, nil
		}
		sub, err := plainfile.OpenDir(cur, elem)
		if cur != root {
			_ = cur.Close()
		}
		if err != nil {
			return nil, false, refuseFile(path.Join(shown, done), err)
		}
		cur = sub
	}
	return cur, true, nil
}

// close releases the board's folders.
func (b *backlogBoard) close() error {
	for _, f := range b.folders {
		_ = f.dir.Close()
	}
	if b.decisionsDir != nil {
		_ = b.decisionsDir.dir.Close()
	}
	return nil
}

// list finds the task files and orders them by the ids they hold.
func (b *backlogBoard) list() error {
	type named struct {
		key string
		f   backlogFile
	}
	var files []named
	for i, folder := range b.folders {
		names, err := folderNames(folder)
		if err != nil {
			return err
		}
		for _, name := range names {
			t, err := b.read(backlogFile{i, name})
			var pf parseFailed
			if errors.As(err, &pf) {
				// Skipped when scanned; ordered by the id its name gives.
				t.Key, err = b.fileKey(name), nil
			}
			if err != nil {
				return err
			}
			files = append(files, named{t.Key, backlogFile{i, name}})
		}
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, z := files[i], files[j]
		if b.ids.idLess(a.key, z.key) || b.ids.idLess(z.key, a.key) {
			return b.ids.idLess(a.key, z.key)
		}
		return a.f.folder < z.f.folder || a.f.folder == z.f.folder && a.f.name < z.f.name
	})
	b.files = make([]backlogFile, len(files))
	for i, x := range files {
		b.files[i] = x.f
	}
	return nil
}

// folderNames lists the task files of one folder.
func folderNames(folder *backlogFolder) ([]string, error) {
	f, err := folder.dir.Open(".")
	if err != nil {
		return nil, Refuse(Where{File: folder.shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
	}
	defer func() { _ = f.Close() }()
	var names []string
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			if !e.IsDir() && backlogFileName().MatchString(e.Name()) {
				names = append(names, e.Name())
			}
		}
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, Refuse(Where{File: folder.shown}, "path", "readable", "cannot read the Backlog.md folder: %v", err)
		}
	}
}

// scan yields the board's tasks in the order of their ids.
func (b *backlogBoard) scan(yield func(Task) error) error {
	for _, f := range b.files {
		t, err := b.read(f)
		if err != nil {
			var pf parseFailed
			if !errors.As(err, &pf) {
				return err
			}
			// A task file the board cannot read is one item of it.
			t = skippedTask(Where{File: path.Join(b.folders[f.folder].shown, f.name)}, b.fileKey(f.name), pf.error)
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	if b.hasDecisions {
		return yield(decisionsTask(b.decisionsDir.shown))
	}
	return nil
}

// fileKey is the key of the id a task file's name starts with, as
// Backlog.md names them ("task-12 - Title.md"); empty when it has none.
func (b *backlogBoard) fileKey(name string) string {
	id, _, _ := strings.Cut(strings.TrimSuffix(name, ".md"), " ")
	key, err := b.ids.key(Where{}, "id", id)
	if err != nil {
		return ""
	}
	return key
}

// read reads and parses one task file of the board.
func (b *backlogBoard) read(file backlogFile) (Task, error) {
	folder := b.folders[file.folder]
	shown := path.Join(folder.shown, file.name)
	data, err := readBacklogFile(folder.dir, file.name, shown)
	if err != nil {
		return Task{}, err
	}
	t, err := parseBacklog(shown, data, b.ids, folder.status)
	if err != nil {
		return Task{}, parseFailed{err}
	}
	return t, nil
}

// readBacklogFile reads one regular file of dir, at most maxLine bytes.
func readBacklogFile(dir *os.Root, name, shown string) ([]byte, error) {
	f, fi, err := plainfile.Open(dir, name)
	if err != nil {
		return nil, refuseFile(shown, err)
	}
	defer func() { _ = f.Close() }()
	if fi.Size() > maxLine {
		return nil, Refuse(Where{File: shown}, "", "maxLength", "the file holds %d bytes, more than the %d a task file may", fi.Size(), maxLine)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLine+1))
	if err != nil {
		return nil, Refuse(Where{File: shown}, "", "readable", "cannot read the file: %v", err)
	}
	if len(data) > maxLine {
		return nil, Refuse(Where{File: shown}, "", "maxLength", "the file holds more than the %d bytes a task file may", maxLine)
	}
	return data, nil
}

// ParseBacklogFile reads one Backlog.md task file of a board whose prefix
// is task, as the tasks/ folder holds it, named file in errors.
func ParseBacklogFile(file string, data []byte) (Task, error) {
	t, err := parseBacklog(file, data, backlogIDs{prefix: backlogDefaultPrefix}, "")
	if err == nil {
		err = t.Refusal()
	}
	if err != nil {
		return Task{}, err
	}
	return t, nil
}

// parseBacklog reads one task file of a board whose ids are ids; status,
// when set, is the status its folder gives it. A status, priority or date
// it does not know is mended (Task.Mended).
func parseBacklog(file string, data []byte, ids backlogIDs, status string) (Task, error) {
	front, body, line, err := splitFrontmatter(file, data)
	if err != nil {
		return Task{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(quoteHandles(front), &doc); err != nil {
		return Task{}, Refuse(Where{File: file, Line: 2}, "", "format", "the frontmatter is not YAML: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Task{}, Refuse(Where{File: file, Line: 1}, "", "format", "the frontmatter must be a YAML mapping of fields (id, title, status, …)")
	}
	t := Task{Where: Where{File: file}}
	r := backlogReader{ids: ids}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		w := Where{File: file, Line: line + v.Line - 1}
		if err := r.field(&t, w, k, v); err != nil {
			return Task{}, err
		}
	}
	switch {
	case t.Key == "":
		return Task{}, Refuse(Where{File: file, Line: 1}, "id", "required", "the frontmatter has no id (%s-<n>)", ids.prefix)
	case t.Title == "":
		return Task{}, Refuse(Where{File: file, Line: 1}, "title", "required", "the frontmatter has no title")
	}
	if r.sourceID != "" {
		t.Source = r.sourceID
	}
	if status != "" {
		t.Status = status
	}
	switch {
	case t.Status != "blocked":
		t.BlockedReason = nil
	case t.BlockedReason == nil:
		t.BlockedReason = ptr(BacklogBlockedReason)
	}
	if d := backlogBody(body); d != "" {
		t.Description = &d
	}
	return t, nil
}

// backlogReader reads the frontmatter fields of one file.
type backlogReader struct {
	ids backlogIDs
	// sourceID is the file's source_id: the id the task had before cairn
	// exported it, which wins over its id.
	sourceID string
}

// field reads one frontmatter field into t. Fields cairn has no place
// for (reporter, milestone, ordinal, …) are left out; blocked_reason,
// progress, estimate_hours and source_id are cairn's own, written by its
// export.
func (r *backlogReader) field(t *Task, w Where, k string, v *yaml.Node) error {
	switch k {
	case "id":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		if t.Key, err = r.ids.key(w, k, s); err != nil {
			return err
		}
		t.Source = strings.TrimSpace(s)
	case "source_id":
		s, err := scalar(w, k, v)
		r.sourceID = strings.TrimSpace(s)
		return err
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
			// A status the board's config.yml adds: the nearest by name.
			t.mendStatus(Refuse(w, k, "enum", "status %q is not one cairn knows; use To Do, In Progress, Done, Backlog, Blocked, Review or Cancelled", s),
				w, s, "To Do, In Progress, Done, Backlog, Blocked, Review, Cancelled")
			return nil
		}
		t.Status = st
	case "blocked_reason":
		s, err := scalar(w, k, v)
		if err != nil || s == "" {
			return err
		}
		t.BlockedReason = ptr(s)
	case "progress", "estimate_hours":
		s, err := scalar(w, k, v)
		if err != nil || s == "" {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Refuse(w, k, "type", "%s %q is not a number", k, s)
		}
		if k == "progress" {
			t.Progress = &f
		} else {
			t.EstimateHours = &f
		}
	case "created_date", "updated_date":
		s, err := scalar(w, k, v)
		if err != nil {
			return err
		}
		at, err := backlogDate(w, k, s)
		if err != nil {
			e, _ := errs.As(err)
			t.mend(e, w, fmt.Sprintf("imported without its %s: %q is not a date", k, clipText(s)),
				"write the date as 2025-06-03, 2025-06-03 14:30 or 2025-06-03T14:30:00Z in the source")
			return nil
		}
		if k == "created_date" {
			t.SourceCreated = at
		} else {
			t.SourceUpdated = at
		}
	case "priority":
		s, err := scalar(w, k, v)
		if err != nil || s == "" {
			return err
		}
		p, ok := tmPriorities[strings.ToLower(s)]
		if !ok && strings.EqualFold(s, "normal") {
			p, ok = "normal", true
		}
		if !ok {
			t.mendPriority(Refuse(w, k, "enum", "priority %q is not low, medium, high or critical", s), w, s, "low, medium, high, critical")
			return nil
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
			id, err := r.ids.key(w, k, d)
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
		t.Parent, err = r.ids.key(w, k, s)
		return err
	}
	return nil
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

// The description section as cairn's export writes it, and as Backlog.md
// does when the description is the whole body.
const (
	backlogDescHead = "## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n"
	backlogDescTail = "\n<!-- SECTION:DESCRIPTION:END -->\n"
)

// backlogBody is the task's markdown body without Backlog.md's section
// fences and without the Description heading that opens it: the rest
// (acceptance criteria, plan, notes) keeps its headings. A body that is
// only the fenced description gives that text exactly, spaces included,
// so that cairn's export reads back to the same description.
func backlogBody(body []byte) string {
	s := strings.TrimLeft(string(body), "\r\n")
	if rest, ok := strings.CutPrefix(s, backlogDescHead); ok {
		// The last fence closes it: the text may hold the fence's line.
		if text, ok := strings.CutSuffix(strings.TrimRight(rest, " \t\r\n")+"\n", backlogDescTail); ok {
			return text
		}
	}
	s = backlogMarker().ReplaceAllString(s, "")
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimPrefix(s, "## Description"))
	return s
}
