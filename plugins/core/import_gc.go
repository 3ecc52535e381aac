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

// importGC holds the collector at importGCPercent while any import runs.
var importGC struct {
	mu      sync.Mutex
	running int
	prev    int
}

// collectForImport ends the start-up window at once and lowers the GC
// percent until the returned func is called, for as long as any import
// runs; a stricter percent (GOGC) is kept.
func collectForImport() (done func()) {
	startgc.Done()
	importGC.mu.Lock()
	defer importGC.mu.Unlock()
	if importGC.running == 0 {
		importGC.prev = debug.SetGCPercent(importGCPercent)
		if importGC.prev >= 0 && importGC.prev < importGCPercent {
			debug.SetGCPercent(importGC.prev)
		}
	}
	importGC.running++
	return func() {
		importGC.mu.Lock()
		defer importGC.mu.Unlock()
		importGC.running--
		if importGC.running == 0 {
			debug.SetGCPercent(importGC.prev)
		}
	}
}
