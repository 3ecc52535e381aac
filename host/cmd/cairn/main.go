// Command cairn is the cairn MCP tool server and plugin host.
package main

import (
	"os"

	// stdoutguard must initialise first: stdout carries MCP JSON-RPC (or,
	// in plugin mode, the go-plugin handshake) and nothing else.
	_ "github.com/cairn-mcp/cairn/sdk/stdoutguard"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/cli"
	"github.com/cairn-mcp/cairn/internal/procstart"

	// The built-in areas register themselves with the registry.
	_ "github.com/cairn-mcp/cairn/plugins/builtin/areas"
)

func main() {
	procstart.Begin()
	os.Exit(cli.Main(os.Args[1:], cli.Wiring{Version: host.Version, NewHost: newHost}))
}
