//go:build !linux

package sdk

import "runtime/debug"

// trimIdleMemory returns the start-up garbage to the OS; see trim_linux.go.
func trimIdleMemory() { debug.FreeOSMemory() }
