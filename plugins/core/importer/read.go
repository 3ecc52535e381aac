package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Source is an import's input as a stream: Scan yields its tasks one at a
// time, in input order, and yields the same tasks each time it is called.
// An import reads its input twice, once to check and plan it and once to
// write it, and never holds its text whole (docs/decisions.md D41).
type Source interface {
	Scan(yield func(Task) error) error
}

// Tasks is a Source of tasks already in memory.
type Tasks []Task

// Scan yields every task.
func (ts Tasks) Scan(yield func(Task) error) error {
	for _, t := range ts {
		if err := yield(t); err != nil {
			return err
		}
	}
	return nil
}

// scanFunc is a Source made of its Scan.
type scanFunc func(yield func(Task) error) error

func (f scanFunc) Scan(yield func(Task) error) error { return f(yield) }

// Input is the Source of a file or folder that Open checked and opened;
// Close releases it.
type Input struct {
	scan  func(yield func(Task) error) error
	close func() error
}

// Scan yields the input's tasks from its start.
func (in *Input) Scan(yield func(Task) error) error { return in.scan(yield) }

// Close releases the input's file or folder.
func (in *Input) Close() error { return in.close() }

// DetectFormat names the format of the file or folder at path from its
// shape: a folder holding issues.jsonl is beads' (.beads/), one of *.json
// files and no tasks folder or *.md file is a Claude Code task list, any
// other folder a Backlog.md board; a file
// named issues.jsonl is beads', another *.jsonl cairn's JSON Lines unless
// its first line is a beads issue (an "id" and no "task_id"); *.json is
// task-master's tasks.json. Empty when it cannot tell. It reads at most
// the first line of a file, and only of a regular one.
func DetectFormat(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if fi, err := os.Lstat(filepath.Join(path, beadsFile)); err == nil && fi.Mode().IsRegular() {
			return FormatBeads
		}
		if looksLikeClaudeList(path) {
			return FormatClaude
		}
		return FormatBacklog
	}
	if strings.EqualFold(filepath.Base(path), beadsFile) {
		return FormatBeads
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		if firstLineIsBeads(path) {
			return FormatBeads
		}
		return FormatJSONL
	case ".json":
		return FormatTaskMaster
	}
	return ""
}

// looksLikeClaudeList reports whether the folder at dir holds *.json files
// and neither a tasks folder nor *.md files, which a Backlog.md board has.
func looksLikeClaudeList(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	anyJSON := false
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		switch {
		case name == "tasks" || strings.HasSuffix(name, ".md"):
			return false
		case !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".json") && !e.IsDir():
			anyJSON = true
		}
	}
	return anyJSON
}

// firstLineIsBeads reports whether the first non-blank line of the file at
// path is a JSON object with an "id" and no "task_id": a beads issue, not
// a line of cairn's export.
func firstLineIsBeads(path string) bool {
	f, err := openPlainFile(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxBeadsLine)
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(b, &keys) != nil {
			return false
		}
		_, id := keys["id"]
		_, taskID := keys["task_id"]
		return id && !taskID
	}
	return false
}

// Options are what an import picks of its input: of a task-master file,
// the tags to read (none: every tag) and whether each tag but master goes
// to a project of its own (docs/decisions.md D41).
type Options struct {
	Tags        []string
	TagProjects bool
}

// Open opens the file or folder at path in format (empty: DetectFormat's
// guess) as an Input. It reads only regular files (plainFile): a
// folder's symlinks, hard-linked files, FIFOs and devices are refused,
// naming the path and why.
func Open(path, format string, o Options) (*Input, error) {
	if format == "" {
		format = DetectFormat(path)
	}
	switch format {
	case FormatJSONL, FormatBeads:
		if st, err := os.Stat(path); err == nil && st.IsDir() && format == FormatBeads {
			path = filepath.Join(path, beadsFile) // the .beads folder
		}
		f, err := openPlainFile(path)
		if err != nil {
			return nil, err
		}
		scan := jsonlLines.scanFile
		if format == FormatBeads {
			scan = beadsLines.scanFile
		}
		return &Input{scan: func(yield func(Task) error) error { return scan(path, f, yield) }, close: f.Close}, nil
	case FormatTaskMaster:
		f, err := openPlainFile(path)
		if err != nil {
			return nil, err
		}
		src, err := openTaskMaster(path, f, o)
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		return &Input{scan: src.scan, close: f.Close}, nil
	case FormatBacklog:
		src, err := openBacklog(path)
		if err != nil {
			return nil, err
		}
		return &Input{scan: src.scan, close: src.close}, nil
	case FormatClaude:
		src, err := openClaude(path)
		if err != nil {
			return nil, err
		}
		return &Input{scan: src.scan, close: src.dir.Close}, nil
	case "":
		return nil, Refuse(Where{File: path}, "format", "required", "cannot tell the format of %s from its name; pass --format %s", path, strings.Join(Formats, "|"))
	default:
		return nil, Refuse(Where{File: path}, "format", "enum", "format %q is not one of %s", format, strings.Join(Formats, ", "))
	}
}

// Read reads every task of the file or folder at path, for callers that
// want them in memory (tests, small inputs); an import streams Open's
// Input instead.
func Read(path, format string, o Options) ([]Task, error) {
	in, err := Open(path, format, o)
	if err != nil {
		return nil, err
	}
	defer func() { _ = in.Close() }()
	return collect(in)
}

// collect gathers what src yields; none when it fails or yields a task
// mended or skipped (strictly).
func collect(src Source) ([]Task, error) {
	var out []Task
	if err := src.Scan(strictly(func(t Task) error { out = append(out, t); return nil })); err != nil {
		return nil, err
	}
	return out, nil
}
