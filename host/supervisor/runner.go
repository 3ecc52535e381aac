package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// handshakeLine matches go-plugin's handshake: core|app|network|address|protocol[|cert].
var handshakeLine = regexp.MustCompile(`^\d+\|\d+\|(tcp|unix)\|[^|]+\|(grpc|netrpc)(\|.*)?$`)

// procRunner starts a plugin process the way cairn needs it, where
// go-plugin's default runner would not:
//
//   - stdin is /dev/null: the host's stdin is the MCP transport and a plugin
//     that inherits it could swallow client messages;
//   - the process gets SIGKILL when the host dies (Pdeathsig) and lives in
//     its own process group, so a Ctrl-C aimed at the host's terminal group
//     reaches the host, which then stops plugins cleanly;
//   - stdout lines that are not the handshake are diverted to the log, so a
//     plugin that prints before serving does not break the handshake.
type procRunner struct {
	log    hclog.Logger
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	exited chan struct{}
	once   sync.Once
	pid    int
	// waitErr is cmd.Wait's result, read after exited is closed.
	waitErr error
	// lastLine remembers the plugin's last stderr line for the exit reason.
	lastLine *lastLine
	// stderrW is the child's end of the stderr pipe, closed after Start.
	stderrW *os.File
	// rawOut is the unfiltered stdout, closed only if Start never runs.
	rawOut io.ReadCloser
	// killMu orders Start and Kill: a Kill that comes first makes Start
	// refuse, so a stopped plugin cannot be started after all.
	killMu sync.Mutex
	killed bool
}

var _ runner.Runner = (*procRunner)(nil)

// newProcRunner prepares the plugin process: path run as it is, or, with a
// checked image, the image's bytes (path then only names it in argv[0]).
func newProcRunner(log hclog.Logger, path string, im *image, args, env []string, ll *lastLine) (*procRunner, error) {
	cmd := exec.Command(path, args...)
	if im != nil {
		cmd.Path = im.execPath()
		cmd.ExtraFiles = []*os.File{im.f}
	}
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	cmd.SysProcAttr = pluginProcAttr()
	rawOut, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// An os.Pipe, not cmd.StderrPipe: Wait closes the latter as soon as
	// the process exits, dropping the last lines a crashing plugin wrote,
	// which are the ones that explain the crash.
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderrW
	r := &procRunner{log: log, cmd: cmd, stderr: &teeLast{ReadCloser: stderr, last: ll}, stderrW: stderrW, rawOut: rawOut, exited: make(chan struct{}), lastLine: ll}
	pr, pw := io.Pipe()
	r.stdout = pr
	go r.filterStdout(rawOut, pw)
	return r, nil
}

func (r *procRunner) filterStdout(in io.Reader, out *io.PipeWriter) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if handshakeLine.MatchString(line) {
			if _, err := fmt.Fprintln(out, line); err != nil {
				// go-plugin stopped reading (start failed); keep draining.
				continue
			}
			continue
		}
		r.log.Warn("plugin wrote to stdout; stdout is reserved for the handshake, log to stderr instead", "line", truncate(line, 512))
	}
	_ = out.CloseWithError(sc.Err())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func (r *procRunner) Start(context.Context) error {
	r.killMu.Lock()
	defer r.killMu.Unlock()
	if r.killed {
		// Release the pipes (and with them filterStdout's goroutine).
		_ = r.stderrW.Close()
		_ = r.stderr.Close()
		_ = r.rawOut.Close()
		return errors.New("the plugin was stopped before it started")
	}
	errc := make(chan error, 1)
	spawnOnce.Do(startSpawner)
	spawnCh <- func() { errc <- r.cmd.Start() }
	err := <-errc
	_ = r.stderrW.Close() // the child has its copy; EOF comes when it exits
	if err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	return nil
}

// Pdeathsig fires when the *thread* that forked the child exits, not the
// process. Go may retire threads, so every plugin is forked from one
// goroutine locked to its own thread for the life of the host.
var (
	spawnOnce sync.Once
	spawnCh   = make(chan func())
)

func startSpawner() {
	go func() {
		runtime.LockOSThread()
		for f := range spawnCh {
			f()
		}
	}()
}

func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.once.Do(func() {
		r.waitErr = err
		close(r.exited)
	})
	return err
}

// exitStatus says how the process ended: "exit status 2", "signal:
// killed". Call after exited.
func (r *procRunner) exitStatus() string {
	if ps := r.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	if r.waitErr != nil {
		return r.waitErr.Error()
	}
	return "exited"
}

// withLastLine appends the plugin's last stderr line to an exit status. The
// line can arrive after the exit (through go-plugin's stdio stream), so
// callers format it when they report, not when the process ends.
func withLastLine(status string, ll *lastLine) string {
	if ll == nil {
		return status
	}
	if line := ll.get(); line != "" {
		return status + "; last stderr line: " + line
	}
	return status
}

// lastLine keeps the last non-empty line a plugin wrote to stderr, raw or
// (after go-plugin's Serve took over os.Stderr) through the gRPC stdio
// stream.
type lastLine struct {
	mu      sync.Mutex
	partial []byte
	line    string
}

func newLastLine() *lastLine { return &lastLine{} }

// Write lets lastLine sit behind an io.MultiWriter.
func (l *lastLine) Write(p []byte) (int, error) {
	l.write(p)
	return len(p), nil
}

func (l *lastLine) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			if s := strings.TrimSpace(string(l.partial)); s != "" {
				l.line = s
			}
			l.partial = l.partial[:0]
			continue
		}
		if len(l.partial) < 512 {
			l.partial = append(l.partial, b)
		}
	}
}

func (l *lastLine) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.partial)); s != "" {
		return truncate(s, 512)
	}
	return truncate(l.line, 512)
}

// teeLast passes a stream through while lastLine watches it.
type teeLast struct {
	io.ReadCloser
	last      *lastLine
	closeOnce sync.Once
}

func (t *teeLast) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.last.write(p[:n])
	}
	if err != nil {
		// go-plugin never closes the reader; release the pipe at EOF.
		t.closeOnce.Do(func() { _ = t.ReadCloser.Close() })
	}
	return n, err
}

func (r *procRunner) Kill(context.Context) error {
	r.killMu.Lock()
	defer r.killMu.Unlock()
	r.killed = true
	if r.cmd.Process == nil {
		return nil
	}
	err := r.cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.cmd.Path }

func (r *procRunner) ID() string {
	if r.pid == 0 {
		return ""
	}
	return strconv.Itoa(r.pid)
}

func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the go-plugin handshake; run it under cairn (not by hand) and check that it calls sdk.Serve and that it is built for this OS and architecture"
}

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
