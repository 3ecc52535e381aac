package core

import (
	"runtime/debug"
	"sync"

	"github.com/cairn-mcp/cairn/internal/startgc"
)

// importGCPercent is the GC percent the core area runs at while it
// imports. An import allocates hundreds of MB a second for as long as it
// reads and writes, and keeps a few tens of MB live (docs/decisions.md
// D41): at the plugin's usual 300 (host/cli's pluginGCPercent) its heap
// grew to four times that, and an import that starts with the process
// would run its first second with the collector off (internal/startgc).
const importGCPercent = 100

// importMemoryLimit is the soft memory limit of the core area while it
// imports (unless GOMEMLIMIT sets a lower one). A plan of a million tasks
// keeps about 100 MB live (tasks/importplan.go), and GC percent 100 would
// let the heap grow to twice that; near the limit the collector runs more
// often instead. A plan that keeps more live than the limit makes the
// collector work harder (at most half the CPU), never fails the import.
const importMemoryLimit = 192 << 20

// importGC holds the collector at importGCPercent and importMemoryLimit
// while any import runs.
var importGC struct {
	mu        sync.Mutex
	running   int
	prev      int
	prevLimit int64
}

// collectForImport ends the start-up window at once and lowers the GC
// percent and the memory limit until the returned func is called, for as
// long as any import runs; a stricter setting (GOGC, GOMEMLIMIT) is kept.
func collectForImport() (done func()) {
	startgc.Done()
	importGC.mu.Lock()
	defer importGC.mu.Unlock()
	if importGC.running == 0 {
		importGC.prev = debug.SetGCPercent(importGCPercent)
		if importGC.prev >= 0 && importGC.prev < importGCPercent {
			debug.SetGCPercent(importGC.prev)
		}
		importGC.prevLimit = debug.SetMemoryLimit(-1)
		if importGC.prevLimit > importMemoryLimit {
			debug.SetMemoryLimit(importMemoryLimit)
		}
	}
	importGC.running++
	return func() {
		importGC.mu.Lock()
		defer importGC.mu.Unlock()
		importGC.running--
		if importGC.running == 0 {
			debug.SetGCPercent(importGC.prev)
			debug.SetMemoryLimit(importGC.prevLimit)
		}
	}
}
