package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// clusterNode is one `cairn serve --http` of a cluster test: its own data
// dir, a fixed loopback port (so a restarted server comes back where its
// clients look for it), and a process the test may SIGKILL.
type clusterNode struct {
	t    testing.TB
	w    *workspace
	env  []string
	args []string
	addr string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stderr *syncBuffer
}

func newClusterNode(t testing.TB, w *workspace, env []string, args ...string) *clusterNode {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	n := &clusterNode{t: t, w: w, env: env, args: args, addr: addr}
	t.Cleanup(func() {
		n.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", n.addr, n.log())
		}
	})
	return n
}

// start runs the server and waits for its listener.
func (n *clusterNode) start() {
	n.t.Helper()
	n.launch()
	n.waitListening()
}

// launch starts the server process without waiting for it, so several
// servers start at once.
func (n *clusterNode) launch() {
	n.t.Helper()
	cmd := newCmd(n.w, append([]string{"serve", "--http", n.addr}, n.args...)...)
	cmd.Env = append(cmd.Env, n.env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.mu.Lock()
	n.cmd, n.stderr = cmd, stderr
	n.mu.Unlock()
}

// waitListening waits until the server accepts connections.
func (n *clusterNode) waitListening() {
	n.t.Helper()
	if !poll.Within(90*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", n.addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}) {
		n.t.Fatalf("server %s did not listen within 90 s\n%s", n.addr, n.log())
	}
}

// log is what the server has written to stderr so far.
func (n *clusterNode) log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stderr == nil {
		return ""
	}
	return n.stderr.String()
}

// stop signals the server and waits for it to exit.
func (n *clusterNode) stop(sig syscall.Signal) {
	n.mu.Lock()
	cmd := n.cmd
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
}

// mcpURL is the server's MCP endpoint; its port stays across restarts.
func (n *clusterNode) mcpURL() string { return "http://" + n.addr + "/mcp" }

// clusterClient is one agent of a cluster test: an MCP client over HTTP on
// one node that moves to the next node when its node stops answering.
type clusterClient struct {
	name  string
	key   string
	nodes []*clusterNode
	at    int
	c     *client.Client
	moves int
}

// errUnknownOutcome marks a call whose answer never came: the server may or
// may not have applied it.
var errUnknownOutcome = errors.New("no answer")

func (a *clusterClient) connect(ctx context.Context) error {
	var last error
	for try := 0; try < 3*len(a.nodes); try++ {
		url := a.nodes[a.at].mcpURL()
		headers := map[string]string{}
		if a.key != "" {
			headers["Authorization"] = "Bearer " + a.key
		}
		c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
		if err == nil {
			err = c.Start(ctx)
		}
		if err == nil {
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
			init.Params.ClientInfo = mcp.Implementation{Name: a.name, Version: "1"}
			_, err = c.Initialize(ctx, init)
		}
		if err == nil {
			a.c = c
			return nil
		}
		if c != nil {
			_ = c.Close()
		}
		last = err
		a.at = (a.at + 1) % len(a.nodes)
		a.moves++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: no server answers: %w", a.name, last)
}

// call runs one tool call. A transport failure returns errUnknownOutcome
// and moves the client to the next node; a refusal returns the result with
// IsError set.
func (a *clusterClient) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if a.c == nil {
		if err := a.connect(ctx); err != nil {
			return nil, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := a.c.CallTool(cctx, req)
	if err != nil {
		_ = a.c.Close()
		a.c = nil
		a.at = (a.at + 1) % len(a.nodes)
		a.moves++
		return nil, fmt.Errorf("%w: %s on %s: %v", errUnknownOutcome, name, a.nodes[a.at].addr, err)
	}
	return res, nil
}

func (a *clusterClient) close() {
	if a.c != nil {
		_ = a.c.Close()
		a.c = nil
	}
}
