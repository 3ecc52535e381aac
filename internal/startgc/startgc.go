// Package startgc keeps the garbage collector off while a cairn process
// starts.
//
// Every cairn process (relay, daemon, each built-in plugin: one executable)
// allocates about 3 MB in package initialisation alone, most of it in
// santhosh-tekuri/jsonschema (linked through mcp-go's server, which compiles
// every draft's meta-schemas in its init). With the default 4 MB first goal
// a collection started during init or just after it in every process
// (GODEBUG=gctrace=1), a mark phase competing for the CPU with the start-up
// it delays, to free a heap that is mostly still live.
//
// Importing this package turns collection off in its init, which runs before
// the heavy ones (a package is initialised as soon as its few dependencies
// are, lowest import path first). Done restores the collector; the cairn
// command calls it once start-up is over. A memory limit stays in force
// meanwhile, so a start-up that allocates a lot is still collected.
//
// Steady lets a process choose the GC percent Done restores when GOGC
// does not set one: a built-in plugin's heap is small and nearly all its
// allocation is per-call garbage, so under load the default percent
// collects it hundreds of times a second.
package startgc

import (
	"os"
	"runtime/debug"
	"sync"
)

// startLimit bounds the heap while collection is off: past it the runtime
// collects anyway.
const startLimit = 256 << 20

var prevPercent, prevLimit int64

// gogcSet records whether GOGC chose the percent: then Steady keeps it.
var gogcSet = os.Getenv("GOGC") != ""

func init() {
	prevPercent = int64(debug.SetGCPercent(-1))
	prevLimit = debug.SetMemoryLimit(-1)
	if prevLimit > startLimit {
		debug.SetMemoryLimit(startLimit)
	}
}

var (
	mu       sync.Mutex
	finished bool
)

// Done restores the collector as GOGC and GOMEMLIMIT set it, or as Steady
// chose. Calling it again does nothing.
func Done() {
	mu.Lock()
	defer mu.Unlock()
	if finished {
		return
	}
	finished = true
	debug.SetMemoryLimit(prevLimit)
	debug.SetGCPercent(int(prevPercent))
}

// Steady makes percent the GC percent of the running process, unless GOGC
// set one: applied by Done, or at once when Done already ran.
func Steady(percent int) {
	if gogcSet {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	prevPercent = int64(percent)
	if finished {
		debug.SetGCPercent(percent)
	}
}
