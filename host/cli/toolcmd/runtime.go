package toolcmd

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"
)

// Conn runs tool calls for one command.
type Conn interface {
	// Call runs tool with args and decodes its output into out (when not
	// nil); it returns the output as the tool wrote it, or the tool's
	// typed error.
	Call(ctx context.Context, tool string, args any, out any) (json.RawMessage, error)
	// Close releases what the connection holds.
	Close()
}

// Runtime is what a generated command needs from the program around it.
type Runtime struct {
	// Connect opens a connection for the command; readOnly says the tool
	// only reads (it need not create a store that is not there).
	Connect func(cmd *cobra.Command, readOnly bool) (Conn, error)
	// JSON reports whether the command line asks for the tool's output as
	// JSON rather than the readable rendering.
	JSON func(cmd *cobra.Command) bool
	// Usage turns a command line that cannot run into the program's usage
	// error (its exit status and help pointer).
	Usage func(cmd *cobra.Command, msg string) error
}

// Invocation is one run of a generated command, as the hooks see it.
type Invocation struct {
	Cmd *cobra.Command
	// Positional are the command's positional arguments as given.
	Positional []string
	// In is the tool's arguments as assembled from the command line.
	In map[string]any
	// Conn is the command's connection.
	Conn Conn
	// Notes are lines printed after the readable rendering.
	Notes []string
}
