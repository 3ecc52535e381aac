package cli

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// The generated command trees (cairn admin, cairn task) are made from
// embedded copies of their area's committed tool snapshots: help needs
// neither a store nor a running area. TestEmbeddedToolsMatchSnapshots holds
// each copy to the snapshots (UPDATE_CLI_TOOLS=1 rewrites them).

// inventoryOf reads an embedded copy of tool declarations; file names it
// in the panic a malformed copy causes (a build mistake every test of the
// command tree catches).
func inventoryOf(file string, raw []byte) toolcmd.Inventory {
	var list []toolcmd.Tool
	if err := json.Unmarshal(raw, &list); err != nil {
		panic(file + ": " + err.Error())
	}
	inv := toolcmd.Inventory{}
	for _, t := range list {
		inv[t.Name] = t
	}
	return inv
}
