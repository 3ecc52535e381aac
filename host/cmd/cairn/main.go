// Command cairn is the cairn MCP tool server and plugin host.
package main

import (
	"os"

	// stdoutguard must initialise first: stdout carries MCP JSON-RPC (or,
	// in plugin mode, the go-plugin handshake) and nothing else.
	_ "github.com/cairn-mcp/cairn/sdk/stdoutguard"

	"github.com/cairn-mcp/cairn/host/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
