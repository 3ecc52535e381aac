package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit status 2 is for command lines that cannot run (docs/decisions.md D15, issue
// 13): an unknown verb, a missing or malformed argument or flag. Refusals of
// a command that ran are 1; success is 0.

// usageErr is a command line the command cannot run.
type usageErr struct {
	msg string
	// cmd is the command path whose help explains it ("cairn admin keys").
	cmd string
}

func (e usageErr) Error() string { return e.msg }

// strictUsage makes every command of the tree answer a bad command line
// with a usage error: group commands refuse unknown verbs instead of
// printing their help and succeeding, argument-count checks and flag
// parsing errors become usage errors.
func strictUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr{msg: err.Error(), cmd: c.CommandPath()}
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands() && c.Run == nil && c.RunE == nil && c != root:
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					var verbs []string
					for _, s := range c.Commands() {
						if s.IsAvailableCommand() {
							verbs = append(verbs, s.Name())
						}
					}
					return usageErr{msg: fmt.Sprintf("unknown command %q for %q (its commands: %s)", args[0], c.CommandPath(), strings.Join(verbs, ", ")), cmd: c.CommandPath()}
				}
				return c.Help()
			}
		case c.Args != nil:
			check := c.Args
			c.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return usageErr{msg: err.Error(), cmd: c.CommandPath()}
				}
				return nil
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// cobraUsage recognizes the usage errors cobra reports without a hook.
func cobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "required flag") ||
		strings.HasPrefix(msg, "unknown flag") || strings.HasPrefix(msg, "unknown shorthand flag")
}

// reportUsage prints a usage error with where to read the command's help.
func reportUsage(w io.Writer, msg, cmd string) int {
	if cmd == "" {
		cmd = "cairn"
	}
	fmt.Fprintf(w, "cairn: %s\nRun '%s --help' for usage.\n", msg, cmd)
	return 2
}
