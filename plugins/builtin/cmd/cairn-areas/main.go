// Command cairn-areas runs cairn's built-in areas, one per process, for the
// cairn host beside it: `cairn-areas __serve-plugin <area>`. It links only
// the areas and the plugin SDK, so it starts in about half the time of
// cairn, which runs the areas from itself when this binary is absent or
// from another build (docs/decisions.md D46).
package main

import (
	"fmt"
	"os"

	// stdoutguard must initialise first: stdout carries the go-plugin
	// handshake and nothing else.
	_ "github.com/cairn-mcp/cairn/sdk/stdoutguard"

	"github.com/cairn-mcp/cairn/internal/procstart"
	"github.com/cairn-mcp/cairn/plugins/builtin"

	// The built-in areas register themselves with the registry.
	_ "github.com/cairn-mcp/cairn/plugins/builtin/areas"
)

func main() {
	procstart.Begin()
	if status, served := builtin.ServeMain(os.Args[1:]); served {
		os.Exit(status)
	}
	fmt.Fprintf(os.Stderr, "cairn-areas runs cairn's built-in areas for the cairn binary beside it; run cairn instead.\n")
	os.Exit(2)
}
