// Package builtin is the registry of cairn's built-in area plugins. Each
// area registers itself from its package's init function; the cairn binary
// imports the areas it ships and re-executes itself in plugin mode to run
// each one as its own process.
package builtin

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cairn-mcp/cairn/sdk"
)

// Area is a built-in area plugin.
type Area struct {
	// Name is the plugin name ("core", "sdd", "admin", ...).
	Name string
	// Description is one line for `cairn plugins`.
	Description string
	// Order sorts areas for start-up and listings.
	Order int
	// Toolsets are the toolsets of the area's tools, the internal one
	// aside. A session that allows none of them does not wait for the
	// area to start (docs/decisions.md D46); nil means unknown, and every
	// session waits.
	Toolsets []string
	// New builds the plugin; it runs in the plugin process only.
	New func() *sdk.Plugin
}

var (
	mu    sync.RWMutex
	areas = map[string]Area{}
)

// Register adds an area. It panics on a duplicate name, which is a build
// mistake.
func Register(a Area) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := areas[a.Name]; dup {
		panic(fmt.Sprintf("builtin: area %q registered twice", a.Name))
	}
	areas[a.Name] = a
}

// Lookup finds an area by name.
func Lookup(name string) (Area, bool) {
	mu.RLock()
	defer mu.RUnlock()
	a, ok := areas[name]
	return a, ok
}

// All returns the registered areas in start-up order.
func All() []Area {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Area, 0, len(areas))
	for _, a := range areas {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}
