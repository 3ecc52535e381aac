// Command cairn-plugin-admin runs the admin area as a standalone plugin, for
// operators who pin or replace areas independently of the cairn binary.
package main

import (
	"github.com/cairn-mcp/cairn/plugins/admin"
	"github.com/cairn-mcp/cairn/sdk"
)

func main() {
	sdk.Serve(admin.New())
}
