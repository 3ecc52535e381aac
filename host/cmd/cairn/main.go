// Command cairn is the cairn MCP tool server and plugin host.
package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	// stdoutguard must initialise first: stdout carries MCP JSON-RPC (or,
	// in plugin mode, the go-plugin handshake) and nothing else.
	_ "github.com/cairn-mcp/cairn/sdk/stdoutguard"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/cli"
	"github.com/cairn-mcp/cairn/internal/cpuprofile"
	"github.com/cairn-mcp/cairn/internal/startgc"

	// The built-in areas register themselves with the registry.
	_ "github.com/cairn-mcp/cairn/plugins/builtin/areas"
)

// startWindow is how long a process runs before its first collection
// (unless it reaches startgc's memory limit sooner).
const startWindow = time.Second

func main() {
	// An agent host may close our stderr before we finish shutting down; a
	// write to a closed pipe must fail, not kill us before the TEST data
	// dir is removed and the plugins are stopped.
	signal.Ignore(syscall.SIGPIPE)
	cpuprofile.Start()
	// Collection has been off since startgc's init; a session's first
	// answer comes well within this window, and whatever the process does
	// next runs with the collector GOGC asks for.
	time.AfterFunc(startWindow, startgc.Done)
	os.Exit(cli.Main(os.Args[1:], cli.Wiring{Version: host.Version, NewHost: newHost}))
}
