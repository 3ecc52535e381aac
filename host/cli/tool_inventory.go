package cli

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

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

// areaFlags are the flags every generated command group shares.
type areaFlags struct {
	config string
	json   bool
}

// areaConn is an areaClient as a generated command's connection.
type areaConn struct{ *areaClient }

func (c areaConn) Call(ctx context.Context, tool string, args any, out any) (json.RawMessage, error) {
	return c.call(ctx, tool, args, out)
}

func (c areaConn) Close() { c.close() }

// areaBuilder makes the generated commands of one area's tools: each
// calls area as area_call.go says (through the daemon when one serves the
// data dir, otherwise in a host of its own), reads-only where the tool is
// read-only.
func areaBuilder(area string, tools toolcmd.Inventory, flagNames map[string]string, f *areaFlags) toolcmd.Builder {
	return toolcmd.Builder{
		Tools:     tools,
		FlagNames: flagNames,
		Reserved:  []string{"config", "json"},
		Runtime: toolcmd.Runtime{
			Connect: func(cmd *cobra.Command, readOnly bool) (toolcmd.Conn, error) {
				mode := writes
				if readOnly {
					mode = reads
				}
				c, err := openAreas(cmd.Context(), f.config, mode, area)
				if err != nil {
					return nil, err
				}
				return areaConn{c}, nil
			},
			JSON:  func(*cobra.Command) bool { return f.json },
			Usage: func(cmd *cobra.Command, msg string) error { return usageErr{msg: msg, cmd: cmd.CommandPath()} },
		},
	}
}
