package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A core.db left zero bytes (a crashed copy, a full disk) or deleted in a
// data dir that held 3 tasks is refused by `cairn serve` — through the
// shared daemon, with CAIRN_DAEMON=off and with --no-daemon — with one
// line naming the file and the commands to run, and the file is left as
// it was: nothing is recreated empty (docs/decisions.md D42). `cairn store
// check` names it, and `cairn restore` of a backup brings the 3 tasks back.
func TestVanishedStoreRefusedByServe(t *testing.T) {
	if suiteOnPostgres {
		t.Skip("bbolt files only")
	}
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web", "CAIRN_LOG_LEVEL=warn")
	for i := 0; i < 3; i++ {
		okCall(t, s, "task_create", map[string]any{"title": fmt.Sprintf("task %d", i), "project": "web"})
	}
	s.close()
	backup := filepath.Join(t.TempDir(), "backup")
	if code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "backup", backup); code != 0 {
		t.Fatalf("backup: exit %d\n%s\n%s", code, out, errOut)
	}
	path := filepath.Join(w.dataDir(), "core.db")

	refused := func(t *testing.T, says string, env []string, args ...string) {
		t.Helper()
		code, _, errOut := runCairn(t, w, initLine, append([]string{"CAIRN_LOG_LEVEL=error", "CAIRN_PROJECT=web"}, env...), args...)
		if code == 0 {
			t.Fatalf("serve started on a vanished store\nstderr:\n%s", errOut)
		}
		if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 {
			t.Errorf("serve wrote %d lines, want one:\n%s", len(lines), errOut)
		}
		for _, want := range []string{"ERR_INIT_FAILED", "plugin core could not start", path, says, "cairn store check", "cairn restore"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("serve's error does not say %q:\n%s", want, errOut)
			}
		}
	}

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"daemon", []string{"CAIRN_DAEMON=on"}, []string{"serve"}},
		{"CAIRN_DAEMON=off", []string{"CAIRN_DAEMON=off"}, []string{"serve"}},
		{"--no-daemon", nil, []string{"serve", "--no-daemon"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused(t, "is empty (0 bytes)", c.env, c.args...)
			if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
				t.Fatalf("core.db is no longer the empty file: %v %v", fi, err)
			}
		})
	}
	code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "store", "check")
	if code != 1 || !strings.Contains(out, path+": the file is 0 bytes") {
		t.Errorf("store check of the empty core.db: exit %d\n%s\n%s", code, out, errOut)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	refused(t, "is missing", []string{"CAIRN_DAEMON=on"}, "serve")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the missing core.db was created: %v", err)
	}
	code, out, errOut = runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "store", "check")
	if code != 1 || !strings.Contains(out, path+": the file is missing") {
		t.Errorf("store check of the missing core.db: exit %d\n%s\n%s", code, out, errOut)
	}

	if code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "restore", backup); code != 0 {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errOut)
	}
	s = w.serve("CAIRN_PROJECT=web", "CAIRN_LOG_LEVEL=warn")
	if got := okCall(t, s, "task_list", map[string]any{"project": "web"}); got["total_count"] != float64(3) {
		t.Fatalf("after the restore task_list answers %v, want 3 tasks", got)
	}
}

// A fresh data dir still starts empty, and lists the stores it created.
func TestVanishedStoreFreshDataDirStarts(t *testing.T) {
	if suiteOnPostgres {
		t.Skip("bbolt files only")
	}
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web", "CAIRN_LOG_LEVEL=warn")
	if got := okCall(t, s, "task_list", map[string]any{"project": "web"}); got["total_count"] != float64(0) {
		t.Fatalf("a fresh data dir lists %v", got)
	}
	s.close()
	data, err := os.ReadFile(filepath.Join(w.dataDir(), "stores"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ncore.db\n", "\nadmin.db\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the inventory does not list %q:\n%s", strings.TrimSpace(want), data)
		}
	}
}
