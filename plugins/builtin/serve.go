package builtin

import (
	"fmt"
	"os"

	"github.com/cairn-mcp/cairn/internal/startgc"
	"github.com/cairn-mcp/cairn/sdk"
)

// ServeArg is the hidden first argument that makes a binary holding the
// built-in areas (cairn itself, or cairn-areas beside it) serve one area
// as a plugin process: `<binary> __serve-plugin <area>`.
const ServeArg = "__serve-plugin"

// pluginGCPercent is a built-in plugin's GC percent when GOGC sets none.
// Its live heap is a few MB and a durable write allocates tens of KB of
// garbage, so at the default 100 the core plugin spent 13 % of its CPU
// collecting under 8 writing clients; at 300 it uses 10–20 % less CPU
// per write, for a few MB more heap while busy, which the idle trim
// (sdk/idle.go) returns.
const pluginGCPercent = 300

// ServeMain runs the area args name when args are ServeArg and an area's
// name, and reports whether they were. It returns only when the area is
// unknown (status 2); otherwise the plugin serves until the host stops it
// and the process exits from the SDK.
func ServeMain(args []string) (status int, served bool) {
	if len(args) != 2 || args[0] != ServeArg {
		return 0, false
	}
	a, ok := Lookup(args[1])
	if !ok {
		fmt.Fprintf(os.Stderr, "cairn: no built-in area %q\n", args[1])
		return 2, true
	}
	startgc.Steady(pluginGCPercent)
	sdk.Serve(a.New())
	return 0, true
}
