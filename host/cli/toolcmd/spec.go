package toolcmd

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Spec says how one tool is offered on the command line. Everything it
// leaves out comes from the tool's input schema: one flag per property,
// typed, described and checked as the schema says.
type Spec struct {
	// Tool names the tool the command calls.
	Tool string
	// Use is the verb ("create"); the positional arguments' placeholders
	// are added to it. A Use with a space is taken as it is
	// ("get <project-id|slug>").
	Use string
	// Short is the one-line help; default: the tool's title.
	Short string
	// Args are the properties given as positional arguments, in order.
	Args []string
	// PositionalArgs overrides the check of the argument count (default:
	// exactly len(Args)).
	PositionalArgs cobra.PositionalArgs
	// Flatten lists object properties whose own properties are offered as
	// flags of their own (rate_limit → --per-minute, --per-hour, …) beside
	// the property's JSON-valued flag.
	Flatten []string
	// Omit lists properties the command does not offer as flags (a hook
	// sets them from a flag of its own, see Flags).
	Omit []string
	// Required lists properties the command requires although the schema
	// does not.
	Required []string
	// Defaults are values the command sends for properties the command line
	// leaves out (shown as the flags' defaults).
	Defaults map[string]any
	// Flags adds flags the schema does not describe; Prepare reads them.
	Flags func(fs *pflag.FlagSet)
	// Prepare completes or refuses the assembled arguments before they are
	// validated and sent; it may call the area (inv.Conn).
	Prepare func(inv *Invocation) error
	// Check refuses an output that reports a failure as data (a
	// "success": false answer) and may add Notes, or add to the output
	// what its readable rendering needs (Runtime.JSON says whether the
	// output is printed as it is instead).
	Check func(inv *Invocation, out map[string]any) error
	// Render prints the output readably (into a tabwriter); default: a
	// generic rendering of the output object.
	Render func(w io.Writer, out, in map[string]any)
}
