//go:build !linux

package supervisor

import "syscall"

// pluginProcAttr puts the plugin in its own process group. Only Linux has
// Pdeathsig; elsewhere the SDK's watch of its parent alone ends a plugin
// whose host is gone (docs/architecture.md, Processes).
func pluginProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
