// Command cairn is the cairn MCP tool server and plugin host.
package main

import (
	"os"
	"os/signal"
	"syscall"

	// stdoutguard must initialise first: stdout carries MCP JSON-RPC (or,
	// in plugin mode, the go-plugin handshake) and nothing else.
	_ "github.com/cairn-mcp/cairn/sdk/stdoutguard"

	"github.com/cairn-mcp/cairn/host/cli"

	// The built-in areas register themselves with the registry.
	_ "github.com/cairn-mcp/cairn/plugins/builtin/areas"
)

func main() {
	// An agent host may close our stderr before we finish shutting down; a
	// write to a closed pipe must fail, not kill us before the TEST data
	// dir is removed and the plugins are stopped.
	signal.Ignore(syscall.SIGPIPE)
	startCPUProfile()
	os.Exit(cli.Main(os.Args[1:]))
}
