// Command cairn-plugin-vision runs the vision and computer-use area as a
// standalone plugin, for operators who pin or replace areas independently
// of the cairn binary.
package main

import (
	"github.com/cairn-mcp/cairn/plugins/vision"
	"github.com/cairn-mcp/cairn/sdk"
)

func main() {
	sdk.Serve(vision.New())
}
