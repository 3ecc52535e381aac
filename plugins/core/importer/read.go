package importer

import (
	"os"
	"path/filepath"
	"strings"
)

// maxFile bounds a tasks.json, which is read whole: a million tasks with
// long details fit (docs/decisions.md D33 bounds what a call may cost).
const maxFile = 1 << 30

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

// Read reads the tasks of the file or folder at path in format (empty:
// DetectFormat's guess); tag picks a task-master tag.
func Read(path, format, tag string) ([]Task, error) {
	if format == "" {
		format = DetectFormat(path)
	}
	w := Where{File: path}
	switch format {
	case FormatJSONL:
		f, err := os.Open(path)
		if err != nil {
			return nil, Refuse(w, "path", "readable", "cannot open the file: %v", err)
		}
		defer func() { _ = f.Close() }()
		return ReadJSONL(path, f)
	case FormatTaskMaster:
		if st, err := os.Stat(path); err == nil && st.Size() > maxFile {
			return nil, Refuse(w, "path", "maxLength", "the file holds %d bytes, more than the %d a tasks.json may; split it by tag", st.Size(), maxFile)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, Refuse(w, "path", "readable", "cannot read the file: %v", err)
		}
		return ReadTaskMaster(path, data, tag)
	case FormatBacklog:
		dir, err := filepath.Abs(path)
		if err != nil {
			return nil, Refuse(w, "path", "readable", "cannot resolve the folder: %v", err)
		}
		return ReadBacklog(os.DirFS(dir), ".", path)
	case "":
		return nil, Refuse(w, "format", "required", "cannot tell the format of %s from its name; pass --format %s", path, strings.Join(Formats, "|"))
	default:
		return nil, Refuse(w, "format", "enum", "format %q is not one of %s", format, strings.Join(Formats, ", "))
	}
}
