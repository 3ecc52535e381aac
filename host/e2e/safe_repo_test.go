package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A repository cairn lives in keeps cairn's data out of git, and one-shot
// commands print their result only (docs/decisions.md D41).

// quietEnv is the workspace's environment without the harness's explicit
// CAIRN_LOG_LEVEL: what a user's shell gives a command.
func quietEnv(w *workspace) {
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "CAIRN_LOG_LEVEL=") {
			env = append(env, kv)
		}
	}
	w.env = env
}

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestFreshGitRepositoryKeepsTheDataDirOutOfGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorkspace(t)
	quietEnv(w)
	// A fresh repository: no .cairn yet.
	if err := os.RemoveAll(filepath.Join(w.root, ".cairn")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, w.root, "init", "-q")
	code, out, errOut := runCairn(t, w, "", nil, "init")
	if code != 0 || errOut != "" {
		t.Fatalf("init: %d\n%s\n%s", code, out, errOut)
	}
	ignore, err := os.ReadFile(filepath.Join(w.root, ".cairn", ".gitignore"))
	if err != nil || string(ignore) != "*\n" {
		t.Fatalf(".cairn/.gitignore = %q, %v; want *", ignore, err)
	}
	// Stores, the signing key, the daemon's files: nothing git sees.
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "demo"); code != 0 {
		t.Fatalf("project add: %d %s", code, errOut)
	}
	if code, _, errOut := runCairn(t, w, "", nil, "audit", "pubkey"); code != 0 {
		t.Fatalf("audit pubkey: %d %s", code, errOut)
	}
	key := filepath.Join(w.dataDir(), "audit-signing.key")
	if _, err := os.Stat(key); err != nil {
		t.Fatalf("no signing key: %v", err)
	}
	if st := gitIn(t, w.root, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".cairn") {
		t.Fatalf("git status lists cairn's files:\n%s", st)
	}
	if code, _, errOut := runCairn(t, w, "", nil, "status"); code != 3 || errOut != "" {
		t.Fatalf("status with nothing tracked: %d, stderr %q", code, errOut)
	}
	// Committed by force: status and init say so, in one line naming the
	// key first.
	gitIn(t, w.root, "add", "-f", ".cairn/data/core.db", ".cairn/data/audit-signing.key")
	for _, args := range [][]string{{"status"}, {"init"}} {
		code, _, errOut := runCairn(t, w, "", nil, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		key, db := strings.Index(lines[0], "audit-signing.key"), strings.Index(lines[0], "core.db")
		if (args[0] == "status" && code != 3) || (args[0] == "init" && code != 0) || len(lines) != 1 ||
			!strings.Contains(lines[0], "warning") || db < 0 || key < 0 || key > db {
			t.Fatalf("cairn %v with tracked data: %d, stderr %q", args, code, errOut)
		}
	}
	// Without git on the PATH there is nothing to ask, and no warning.
	noGit := []string{"PATH=" + t.TempDir()}
	if code, _, errOut := runCairn(t, w, "", noGit, "status"); code != 3 || errOut != "" {
		t.Fatalf("status without git: %d, stderr %q", code, errOut)
	}
	// A .gitignore the user wrote stays theirs; a data dir made inside it
	// gets its own.
	own := t.TempDir()
	gitIn(t, own, "init", "-q")
	mine := "config.yaml is committed\n"
	if err := os.MkdirAll(filepath.Join(own, ".cairn"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, ".cairn", ".gitignore"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCairn(t, w, "", []string{"CAIRN_ROOT=" + own}, "init"); code != 0 || errOut != "" {
		t.Fatalf("init in a repository with its own .cairn/.gitignore: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(own, ".cairn", ".gitignore")); string(b) != mine {
		t.Fatalf("the user's .cairn/.gitignore became %q", b)
	}
	if st := gitIn(t, own, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".cairn/data") {
		t.Fatalf("git status lists the data dir:\n%s", st)
	}
	// A data dir made before cairn wrote .gitignore files: init makes
	// git ignore it.
	old := t.TempDir()
	gitIn(t, old, "init", "-q")
	if err := os.MkdirAll(filepath.Join(old, ".cairn", "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, ".cairn", "data", "daemon.log"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := gitIn(t, old, "status", "--porcelain", "--untracked-files=all"); !strings.Contains(st, ".cairn/data/daemon.log") {
		t.Fatalf("the old data dir is not seen by git to begin with:\n%s", st)
	}
	if code, _, errOut := runCairn(t, w, "", []string{"CAIRN_ROOT=" + old}, "init"); code != 0 || errOut != "" {
		t.Fatalf("init over an old data dir: %d %s", code, errOut)
	}
	if st := gitIn(t, old, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".cairn") {
		t.Fatalf("git status lists the old data dir after init:\n%s", st)
	}
}

// Outside a git work tree cairn status has nothing to warn about.
func TestStatusOutsideGitWarnsOfNothing(t *testing.T) {
	w := newWorkspace(t)
	quietEnv(w)
	if code, _, errOut := runCairn(t, w, "", []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(w.root)}, "status"); code != 3 || errOut != "" {
		t.Fatalf("status outside git: %d, stderr %q", code, errOut)
	}
}

// One-shot commands print their result and their errors only; --verbose
// and an explicit CAIRN_LOG_LEVEL bring the logs back.
func TestOneShotCommandsPrintNoLogs(t *testing.T) {
	w := newWorkspace(t)
	quietEnv(w)
	file := w.writeFile("few.jsonl", `{"task_id":"a","title":"first","status":"done"}
{"task_id":"b","title":"second","depends_on":["a"]}
`, 0o644)
	exported := filepath.Join(w.root, "out.jsonl")
	for _, args := range [][]string{
		{"version"},
		{"init"},
		{"project", "add", "web"},
		{"import", file, "--project", "web"},
		{"project", "list"},
		{"admin", "keys", "list"},
		{"export", "tasks", "--project", "web", "-o", exported},
		{"store", "check"},
		{"plugins"},
		{"tools"},
	} {
		code, out, errOut := runCairn(t, w, "", nil, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("cairn %v: exit %d, stderr %q (want nothing)\nstdout: %s", args, code, errOut, out)
		}
	}
	if b, err := os.ReadFile(exported); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("export wrote %q, %v", b, err)
	}
	// No daemon: an answer on stdout, exit 3, nothing on stderr.
	if code, out, errOut := runCairn(t, w, "", nil, "status"); code != 3 || errOut != "" || out == "" {
		t.Fatalf("status: %d %q %q", code, out, errOut)
	}
	// The logs are there when asked for: the host's and the plugin
	// processes' (go-plugin's own lines among them).
	for _, ask := range []struct {
		args []string
		env  []string
	}{
		{[]string{"plugins", "--verbose"}, nil},
		{[]string{"plugins"}, []string{"CAIRN_LOG_LEVEL=info"}},
	} {
		code, _, errOut := runCairn(t, w, "", ask.env, ask.args...)
		if code != 0 || !strings.Contains(errOut, "plugin ready") || !strings.Contains(errOut, "plugin process exited") {
			t.Fatalf("cairn %v %v: %d, stderr %q; want the start-up and exit logs", ask.args, ask.env, code, errOut)
		}
	}
}

// With a daemon serving the data dir (an agent connected), every command
// of docs/cli.md's survey works through it or refuses in one line.
func TestCommandsWhileADaemonServes(t *testing.T) {
	w := newWorkspace(t)
	quietEnv(w)
	// A workspace plugin the operator has not trusted yet.
	trustEnv, _ := ownTrustStore(t)
	markerPlugin(t, w, filepath.Join(t.TempDir(), "marker"), "v1")
	env := append([]string{trustEnv}, daemonEnv...)
	s, err := startSession(w, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	pid := daemonPID(t, w)
	if pid == 0 {
		t.Fatal("no daemon")
	}
	run := func(args ...string) (int, string, string) { return runCairn(t, w, "", env, args...) }
	ok := func(args ...string) string {
		t.Helper()
		code, out, errOut := run(args...)
		if code != 0 || errOut != "" {
			t.Fatalf("cairn %v while a daemon serves: exit %d, stderr %q\nstdout: %s", args, code, errOut, out)
		}
		return out
	}

	// The daemon's plugins as they run: not started beside it.
	out := ok("plugins")
	for _, name := range []string{"core", "admin", "sdd"} {
		row := ""
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, name+" ") {
				row = line
			}
		}
		if !strings.Contains(row, " running ") || !strings.Contains(row, " ok ") {
			t.Fatalf("plugins while a daemon serves: %s is not running and ok:\n%s", name, out)
		}
	}
	var listed struct {
		Plugins []struct {
			Name, State string
			PID         int
		} `json:"plugins"`
		DaemonPID int `json:"daemon_pid"`
	}
	if err := json.Unmarshal([]byte(ok("plugins", "--json")), &listed); err != nil || listed.DaemonPID != pid || len(listed.Plugins) == 0 {
		t.Fatalf("plugins --json: %+v %v (daemon pid %d)", listed, err, pid)
	}
	for _, p := range listed.Plugins {
		if p.State != "running" {
			t.Fatalf("plugin %s is %s in the daemon", p.Name, p.State)
		}
	}
	if out := ok("status"); !strings.Contains(out, "running") || strings.Contains(out, "stopped") {
		t.Fatalf("status:\n%s", out)
	}
	// Trust takes effect in the daemon at once, and so does its removal.
	marker := func() (state string, untrusted bool) {
		var p pluginsJSON
		if err := json.Unmarshal([]byte(ok("plugins", "--json")), &p); err != nil {
			t.Fatal(err)
		}
		for _, pl := range p.Plugins {
			if pl.Name == "marker" {
				state = pl.State
			}
		}
		for _, u := range p.Untrusted {
			untrusted = untrusted || u.Name == "marker"
		}
		return state, untrusted
	}
	if state, untrusted := marker(); state != "" || !untrusted {
		t.Fatalf("the untrusted marker plugin: state %q, listed untrusted %v", state, untrusted)
	}
	if out := ok("plugins", "trust", "marker"); !strings.Contains(out, "daemon") {
		t.Fatalf("plugins trust:\n%s", out)
	}
	eventually(t, patience, "the daemon to run the trusted marker plugin", func() bool {
		state, _ := marker()
		return state == "running"
	})
	ok("plugins", "untrust", "marker")
	eventually(t, patience, "the daemon to stop the untrusted marker plugin", func() bool {
		state, untrusted := marker()
		return state == "" && untrusted
	})
	if out := ok("project", "list"); !strings.Contains(out, "web") {
		t.Fatalf("project list:\n%s", out)
	}
	ok("store", "check")
	ok("admin", "keys", "list")
	ok("tools")
	ok("version")
	ok("init")
	ok("audit", "pubkey")
	backup := filepath.Join(t.TempDir(), "bk")
	var man struct {
		ViaDaemon bool `json:"via_daemon"`
	}
	if err := json.Unmarshal([]byte(ok("backup", backup)), &man); err != nil || !man.ViaDaemon {
		t.Fatalf("backup: %+v %v", man, err)
	}
	file := w.writeFile("few.jsonl", `{"task_id":"a","title":"first","status":"done"}`+"\n", 0o644)
	ok("import", file, "--project", "web")
	if out := ok("export", "tasks", "--project", "web"); !strings.Contains(out, `"first"`) {
		t.Fatalf("export tasks:\n%s", out)
	}
	task, err := callOK(s, "task_create", map[string]any{"title": "audited", "project": "web"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := callOK(s, "audit_session_start", map[string]any{"task_id": task["task_id"], "auditor_id": "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callOK(s, "merkle_finalize", map[string]any{"session_id": sess["session_id"]}); err != nil {
		t.Fatal(err)
	}
	proof := filepath.Join(w.root, "proof.json")
	if code, _, errOut := run("audit", "export", sess["session_id"].(string), "-o", proof); code != 0 {
		t.Fatalf("audit export: %d %s", code, errOut)
	}
	ok("audit", "verify", proof)

	// What needs the daemon stopped says so in one line, naming cairn stop.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"restore", backup}, 1},
		{[]string{"store", "copy", "--from", w.dataDir(), "--to", "postgres://cairn@127.0.0.1:1/none"}, 1},
		{[]string{"serve", "--no-daemon"}, 2},
	} {
		code, _, errOut := run(c.args...)
		if code != c.code || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "cairn stop") {
			t.Fatalf("cairn %v while a daemon serves: %d, stderr %q", c.args, code, errOut)
		}
	}
	if daemonPID(t, w) != pid || !processAlive(pid) {
		t.Fatal("the daemon did not survive the commands")
	}
	// The daemon serves: it keeps its logs.
	if log, err := os.ReadFile(filepath.Join(w.dataDir(), "daemon.log")); err != nil || !strings.Contains(string(log), "daemon ready") || !strings.Contains(string(log), "plugin ready") {
		t.Fatalf("daemon.log lacks the daemon's start-up lines (%v):\n%s", err, log)
	}
}
