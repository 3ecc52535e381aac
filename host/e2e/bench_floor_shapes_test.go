package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// The floors of cairn's own shape (docs/decisions.md D46): a call through
// cairn crosses a relay, a server and a plugin process, so its floor is the
// least program of those three processes, built here from the module
// versions in go.mod (internal/floor/relay, shaped, plugin):
//
//	relay + mcp-go + pipe plugin  task_get and task_update through the relay
//	mcp-go + pipe plugin          the same with --no-daemon
//	relay + mcp-go                server_ping through the relay (it never
//	                              reaches a plugin)
//
// The bare mcp-go floor (bench_floor_test.go) stays beside them, so a
// figure can be read against both.

// floorShape names one shape.
type floorShape struct {
	name   string
	relay  bool // the client talks to a relay in front of a server on a socket
	plugin bool // the server hands task_get to a pipe plugin
	tool   string
}

var (
	shapeRelayPlugin = floorShape{name: "relay + mcp-go + pipe plugin", relay: true, plugin: true, tool: "task_get"}
	shapePlugin      = floorShape{name: "mcp-go + pipe plugin", plugin: true, tool: "task_get"}
	shapeRelay       = floorShape{name: "relay + mcp-go", relay: true, tool: "server_ping"}
)

var (
	shapedOnce sync.Once
	shapedBins map[string]string
	shapedErr  error
)

// buildShapedFloors builds the three programs once per test binary, static
// as cairn is built.
func buildShapedFloors() (map[string]string, error) {
	shapedOnce.Do(func() {
		shapedBins = map[string]string{}
		for _, name := range []string{"relay", "shaped", "plugin"} {
			out := filepath.Join(binDir, "floor-"+name)
			cmd := exec.Command("go", "build", "-o", out, "github.com/cairn-mcp/cairn/internal/floor/"+name)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			cmd.Stderr = os.Stderr
			if shapedErr = cmd.Run(); shapedErr != nil {
				return
			}
			shapedBins[name] = out
		}
	})
	return shapedBins, shapedErr
}

// shapedFloor is an initialized MCP client on a fresh floor of one shape.
type shapedFloor struct {
	shape  floorShape
	c      *client.Client
	server *exec.Cmd // the server on the socket; nil without a relay
	front  *exec.Cmd // the process the client started: relay or stdio server
	dir    string
}

func startShapedFloor(ctx context.Context, shape floorShape) (*shapedFloor, error) {
	bins, err := buildShapedFloors()
	if err != nil {
		return nil, err
	}
	f := &shapedFloor{shape: shape}
	var serverArgs []string
	if shape.plugin {
		serverArgs = append(serverArgs, "-plugin", bins["plugin"])
	}
	command, args := bins["shaped"], serverArgs
	if shape.relay {
		// A short path: a Unix socket's name is at most 107 bytes.
		if f.dir, err = os.MkdirTemp("", "flr"); err != nil {
			return nil, err
		}
		sock := filepath.Join(f.dir, "s")
		f.server = exec.Command(bins["shaped"], append([]string{"-listen", sock}, serverArgs...)...)
		f.server.Stderr = os.Stderr
		if err := f.server.Start(); err != nil {
			f.close()
			return nil, err
		}
		if !poll.Within(30*time.Second, func() bool { _, err := os.Stat(sock); return err == nil }) {
			f.close()
			return nil, fmt.Errorf("floor %s: no socket after 30 s", shape.name)
		}
		command, args = bins["relay"], []string{sock}
	}
	keep := transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		f.front = exec.CommandContext(ctx, command, args...)
		f.front.Env = env
		return f.front, nil
	})
	if f.c, err = client.NewStdioMCPClientWithOptions(command, nil, args, keep); err != nil {
		f.close()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "bench-client", Version: "1.0"}
	if _, err := f.c.Initialize(ctx, req); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// call is one tools/call of the shape's tool.
func (f *shapedFloor) call() error {
	req := mcp.CallToolRequest{}
	req.Params.Name = f.shape.tool
	req.Params.Arguments = f.args()
	res, err := f.c.CallTool(context.Background(), req)
	if err == nil && res.IsError {
		err = fmt.Errorf("floor %s: %s failed", f.shape.name, f.shape.tool)
	}
	return err
}

// args are the arguments of the shape's tool, as cairn's call has them.
func (f *shapedFloor) args() map[string]any {
	if f.shape.tool == "task_get" {
		return map[string]any{"task_id": "T-1"}
	}
	return map[string]any{}
}

// answer is the structured answer of one call, for its size.
func (f *shapedFloor) answer() any {
	req := mcp.CallToolRequest{}
	req.Params.Name = f.shape.tool
	req.Params.Arguments = f.args()
	res, err := f.c.CallTool(context.Background(), req)
	if err != nil {
		return nil
	}
	return res.StructuredContent
}

// pids are the floor's processes, for the CPU a call costs each: the one
// the client started, and the server on the socket (with its plugin).
func (f *shapedFloor) pids() []int {
	out := []int{f.front.Process.Pid}
	if f.server != nil {
		out = append(out, f.server.Process.Pid)
	}
	return out
}

func (f *shapedFloor) close() {
	if f.c != nil {
		_ = f.c.Close()
	}
	if f.server != nil && f.server.Process != nil {
		_ = f.server.Process.Kill()
		_ = f.server.Wait()
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}
