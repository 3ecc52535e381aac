package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// taskRecord is one task as its plugin keeps it: a JSON file per task in
// <data dir>/tasks/<plugin>/ (docs/decisions.md D39). A file per task, not
// a store the area opens, so the SDK gives every plugin tasks without
// touching the area's store, and a crash leaves each file whole: it is
// written beside and renamed over.
type taskRecord struct {
	ID            string        `json:"id"`
	Tool          string        `json:"tool"`
	Owner         string        `json:"owner"`
	Status        string        `json:"status"`
	StatusMessage string        `json:"statusMessage,omitempty"`
	CreatedAt     time.Time     `json:"createdAt"`
	UpdatedAt     time.Time     `json:"updatedAt"`
	TTL           time.Duration `json:"ttl"`
	PollInterval  time.Duration `json:"pollInterval"`
	Progress      float64       `json:"progress,omitempty"`
	Total         float64       `json:"total,omitempty"`
	Interrupted   bool          `json:"interrupted,omitempty"`
	Result        *taskResult   `json:"result,omitempty"`
}

// taskResult is the tool's result once the task ended.
type taskResult struct {
	Output  json.RawMessage `json:"output,omitempty"`
	Err     *errs.Error     `json:"error,omitempty"`
	Status  int             `json:"status"`
	Content []Content       `json:"content,omitempty"`
}

// MCP task statuses (the 2025-11-25 revision's names; the host maps them to
// either era's shapes).
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

func (r *taskRecord) terminal() bool { return r.Status != TaskWorking }

func (r *taskRecord) expired(now time.Time) bool {
	return r.TTL > 0 && now.After(r.CreatedAt.Add(r.TTL))
}

// Compiled on first use, not in package init, which every cairn process runs.
var taskIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}\.[0-9a-f]{32}$`) })

// taskFiles is the directory of one plugin's task records.
type taskFiles struct{ dir string }

// path is the file of task id; ok is false for an id that is not one this
// plugin could have issued (it never names a file outside the directory).
func (f taskFiles) path(plugin, id string) (string, bool) {
	if !taskIDPattern().MatchString(id) || !strings.HasPrefix(id, plugin+".") {
		return "", false
	}
	return filepath.Join(f.dir, id[len(plugin)+1:]+".json"), true
}

func (f taskFiles) load(path string) (*taskRecord, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r taskRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("task record %s is corrupt: %w", filepath.Base(path), err)
	}
	return &r, nil
}

// save writes r durably: to a file beside, synced, then renamed over.
func (f taskFiles) save(plugin string, r *taskRecord) error {
	path, ok := f.path(plugin, r.ID)
	if !ok {
		return fmt.Errorf("task id %q is malformed", r.ID)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.dir, ".task-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// all reads every record; a corrupt file is skipped and reported to skip.
func (f taskFiles) all(skip func(name string, err error)) ([]*taskRecord, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*taskRecord
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		r, err := f.load(filepath.Join(f.dir, e.Name()))
		if err != nil {
			skip(e.Name(), err)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

func (f taskFiles) remove(plugin, id string) {
	if path, ok := f.path(plugin, id); ok {
		_ = os.Remove(path)
	}
}
