package importer

import (
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
// shape: a folder is a Backlog.md board, *.jsonl cairn's JSON Lines, *.json
// task-master's tasks.json. Empty when it cannot tell.
func DetectFormat(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return FormatBacklog
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".json":
		return FormatTaskMaster
	}
	return ""
}

// Open opens the file or folder at path in format (empty: DetectFormat's
// guess) as an Input; tag picks a task-master tag. It reads only regular
// files (plainFile): a folder's symlinks, hard-linked files, FIFOs and
// devices are refused, naming the path and why.
func Open(path, format, tag string) (*Input, error) {
	if format == "" {
		format = DetectFormat(path)
	}
	switch format {
	case FormatJSONL:
		f, err := openPlainFile(path)
		if err != nil {
			return nil, err
		}
		return &Input{scan: func(yield func(Task) error) error { return scanJSONLFile(path, f, yield) }, close: f.Close}, nil
	case FormatTaskMaster:
		f, err := openPlainFile(path)
		if err != nil {
			return nil, err
		}
		src, err := openTaskMaster(path, f, tag)
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
	case "":
		return nil, Refuse(Where{File: path}, "format", "required", "cannot tell the format of %s from its name; pass --format %s", path, strings.Join(Formats, "|"))
	default:
		return nil, Refuse(Where{File: path}, "format", "enum", "format %q is not one of %s", format, strings.Join(Formats, ", "))
	}
}

// Read reads every task of the file or folder at path, for callers that
// want them in memory (tests, small inputs); an import streams Open's
// Input instead.
func Read(path, format, tag string) ([]Task, error) {
	in, err := Open(path, format, tag)
	if err != nil {
		return nil, err
	}
	defer func() { _ = in.Close() }()
	return collect(in)
}

// collect gathers what src yields; none when it fails.
func collect(src Source) ([]Task, error) {
	var out []Task
	if err := src.Scan(func(t Task) error { out = append(out, t); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}
