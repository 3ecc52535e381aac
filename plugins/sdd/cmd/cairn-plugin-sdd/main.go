// Command cairn-plugin-sdd runs the sdd area as a standalone plugin, for
// operators who pin or replace areas independently of the cairn binary.
package main

import (
	"github.com/cairn-mcp/cairn/plugins/sdd"
	"github.com/cairn-mcp/cairn/sdk"
)

func main() {
	sdk.Serve(sdd.New())
}
