package cli

import (
	"os"

	"github.com/spf13/cobra"
)

// A one-shot command prints its result and its errors, nothing else: the
// start-up and shutdown lines of the host and of the plugin processes it
// starts ("plugin ready", "cairn ready", go-plugin's "plugin process
// exited") are logs an operator asks for with --verbose or an explicit
// CAIRN_LOG_LEVEL. Commands that serve (`cairn serve`, the daemon) keep
// their logs: they are what an operator reads of a server
// (docs/decisions.md D41).

// servesAnnotation marks a command that serves and keeps its logs.
const servesAnnotation = "cairn.serves"

// oneShotLogLevel is a one-shot command's log level: errors only.
const oneShotLogLevel = "error"

// logs says how the running command logs; set before it runs. Quiet
// unless told otherwise: a command whose own hooks keep the root's from
// running stays quiet.
var logs = struct {
	// quiet: a one-shot command without --verbose.
	quiet bool
	// verbose is the --verbose flag.
	verbose bool
}{quiet: true}

// addVerbose gives the tree its --verbose flag and decides, before each
// command runs, whether it logs.
func addVerbose(root *cobra.Command) {
	root.PersistentFlags().BoolVar(&logs.verbose, "verbose", false, "log the host's and the plugins' start-up and shutdown on stderr (commands that serve always log)")
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		logs.quiet = !logs.verbose && c.Annotations[servesAnnotation] == ""
	}
}

// serves marks c as a command that keeps its logs.
func serves(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[servesAnnotation] = "true"
	return c
}

// quietLevel is the log level a command's settings get: errors only for a
// quiet one-shot command whose environment names no level, else level.
func quietLevel(level string) string {
	if logs.quiet && os.Getenv("CAIRN_LOG_LEVEL") == "" {
		return oneShotLogLevel
	}
	return level
}
