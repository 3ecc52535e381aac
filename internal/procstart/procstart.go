// Package procstart is what every cairn process does first in main: the
// cairn command and cairn-areas alike.
package procstart

import (
	"os/signal"
	"syscall"
	"time"

	"github.com/cairn-mcp/cairn/internal/startgc"
)

// startWindow is how long a process runs before its first collection
// (unless it reaches startgc's memory limit sooner).
const startWindow = time.Second

// Begin ignores SIGPIPE, starts the CPU profile CAIRN_CPUPROFILE asks for,
// and restores the collector once start-up is over.
func Begin() {
	// An agent host may close our stderr before we finish shutting down
	// (and a dying host closes a plugin's): a write to a closed pipe must
	// fail, not kill us before the TEST data dir is removed and the stop
	// hooks run.
	signal.Ignore(syscall.SIGPIPE)
	startCPUProfile()
	// Collection has been off since startgc's init; a session's first
	// answer comes well within this window, and whatever the process does
	// next runs with the collector GOGC asks for.
	time.AfterFunc(startWindow, startgc.Done)
}
