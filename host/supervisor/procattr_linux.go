package supervisor

import "syscall"

// pluginProcAttr puts the plugin in its own process group and has the
// kernel kill it when the host dies (docs/architecture.md, Processes).
func pluginProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
