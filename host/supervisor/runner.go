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
	"sync"
	"syscall"

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
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(log hclog.Logger, path string, args, env []string) (*procRunner, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	rawOut, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	r := &procRunner{log: log, cmd: cmd, stderr: stderr, exited: make(chan struct{})}
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
	errc := make(chan error, 1)
	spawnOnce.Do(startSpawner)
	spawnCh <- func() { errc <- r.cmd.Start() }
	if err := <-errc; err != nil {
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
	r.once.Do(func() { close(r.exited) })
	return err
}

func (r *procRunner) Kill(context.Context) error {
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
