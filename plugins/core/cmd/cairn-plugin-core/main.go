// Command cairn-plugin-core runs the core area as a standalone plugin, for
// operators who pin or replace areas independently of the cairn binary.
package main

import (
	"github.com/cairn-mcp/cairn/plugins/core"
	"github.com/cairn-mcp/cairn/sdk"
)

func main() {
	sdk.Serve(core.New())
}
