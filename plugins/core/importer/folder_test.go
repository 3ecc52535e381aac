package importer

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

const secretTask = "---\nid: task-9\ntitle: SECRET from outside the folder\n---\n"

// An import reads only the regular files of the folder it is given
// (docs/decisions.md D41): a FIFO named like a task file is refused at
// once (it used to block the core area until someone wrote to it), and a
// symlinked task file, a symlinked tasks folder and a hard link to a file
// outside are refused rather than read; each refusal names the path and
// the rule.
func TestReadRefusesWhatIsNotTheFoldersOwn(t *testing.T) {
	t.Parallel()
	outside := writeFiles(t, map[string]string{"secret.md": secretTask, "tasks/task-9 - s.md": secretTask})
	board := func(t *testing.T) string {
		return writeFiles(t, map[string]string{"tasks/task-1 - a.md": "---\nid: task-1\ntitle: a\n---\n"})
	}
	for _, c := range []struct {
		name string
		// plant makes the hostile entry in the board dir and returns
		// the path the refusal must name and the file Read is given.
		plant func(t *testing.T, dir string) (named, path string)
		rule  string
	}{
		{"FIFO task file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "tasks", "task-2 - x.md")
			mkfifo(t, p)
			return p, dir
		}, "regularFile"},
		{"FIFO JSON Lines file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "tasks.jsonl")
			mkfifo(t, p)
			return p, p
		}, "regularFile"},
		{"symlinked task file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "tasks", "task-2 - x.md")
			symlink(t, filepath.Join(outside, "secret.md"), p)
			return p, dir
		}, "insideRoot"},
		{"symlinked tasks folder", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "tasks")
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(outside, "tasks"), p)
			return p, dir
		}, "insideRoot"},
		{"hard link to a file outside", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "tasks", "task-2 - x.md")
			if err := os.Link(filepath.Join(outside, "secret.md"), p); err != nil {
				t.Skipf("no hard link across these folders: %v", err)
			}
			t.Cleanup(func() { _ = os.Remove(p) })
			return p, dir
		}, "singleLink"},
	} {
		t.Run(c.name, func(t *testing.T) {
			named, path := c.plant(t, board(t))
			done := make(chan error, 1)
			var got []Task
			go func() {
				ts, err := Read(path, "", Options{})
				got = ts
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				// A writer lets the blocked read end before the test fails.
				if w, err := os.OpenFile(named, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					_ = w.Close()
				}
				t.Fatalf("reading %s blocked", named)
			}
			e, ok := errs.As(err)
			if !ok || e.Status != 400 || e.Details["file"] != named || e.Details["field"] != "path" || e.Details["constraint"] != c.rule {
				t.Fatalf("want a refusal of %s (rule %s), got %v and %d tasks", named, c.rule, err, len(got))
			}
		})
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
