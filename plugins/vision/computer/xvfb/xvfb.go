// Package xvfb starts a private Xvfb server for tests. It is a test helper
// shared by the computer package and the end-to-end tests.
package xvfb

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running Xvfb.
type Server struct {
	// Display is the DISPLAY value, such as ":7".
	Display string
	cmd     *exec.Cmd
}

// Start runs `Xvfb -displayfd` on a free display number with one screen
// of w×h×24, -noreset and no TCP listener, and kills it when the test
// ends. It skips the test only when the Xvfb binary is absent.
func Start(t testing.TB, w, h int) *Server {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Skip("Xvfb is not installed (CI installs it via .ci/run; on Debian/Ubuntu: apt-get install xvfb); skipping the X11 tests")
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -displayfd makes the server pick a free display number and write it
	// to fd 3 once it accepts connections, so tests never race on a number.
	cmd := exec.Command(bin, "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", w, h), "-noreset", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{wr}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	_ = wr.Close()
	s := &Server{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = r.Close()
	})
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case n := <-got:
		if n == "" {
			t.Fatalf("Xvfb did not report a display number; stderr:\n%s", stderr.String())
		}
		s.Display = ":" + n
	case <-time.After(30 * time.Second):
		t.Fatalf("Xvfb did not start within 30s; stderr:\n%s", stderr.String())
	}
	return s
}

// lockedBuffer collects the server's stderr while the test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
