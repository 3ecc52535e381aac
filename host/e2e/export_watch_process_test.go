package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markdownWatch is a running `cairn export --format markdown DIR --watch`
// of the workspace, through its daemon.
type markdownWatch struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan error
}

// startMarkdownWatch starts the watch on dir and returns once it says it
// is watching (its first export written). A failed test logs its stderr.
func startMarkdownWatch(t *testing.T, w *workspace, dir string) *markdownWatch {
	t.Helper()
	cmd := newCmd(w, "export", "--format", "markdown", dir, "--watch")
	cmd.Env = append(cmd.Env, append([]string{"CAIRN_LOG_LEVEL=error"}, daemonEnv...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	mw := &markdownWatch{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = mw.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { mw.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("watch stderr:\n%s", mw.stderr.String())
		}
	})
	ready := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		ready <- line
		_, _ = r.WriteTo(mw.stderr)
	}()
	select {
	case line := <-ready:
		if !strings.Contains(line, "watching") {
			t.Fatalf("watch said %q", line)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the watch did not start: %s", mw.stderr.String())
	}
	return mw
}

// stop interrupts the watch and wants it to end cleanly.
func (mw *markdownWatch) stop(t *testing.T) {
	t.Helper()
	if err := mw.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-mw.exited:
		if err != nil {
			t.Fatalf("the watch ended with %v: %s", err, mw.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not stop on SIGINT")
	}
}
