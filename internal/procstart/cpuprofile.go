package procstart

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"
)

// startCPUProfile profiles this process when CAIRN_CPUPROFILE names a
// directory: every cairn process (relay, daemon, host, plugins) writes
// <dir>/cairn-<pid>.pprof covering its first CAIRN_CPUPROFILE_SECONDS
// (default 30). A fixed window, because plugins end with os.Exit from the
// SDK and no deferred stop would run. For measuring only.
func startCPUProfile() {
	dir := os.Getenv("CAIRN_CPUPROFILE")
	if dir == "" {
		return
	}
	secs, err := strconv.Atoi(os.Getenv("CAIRN_CPUPROFILE_SECONDS"))
	if err != nil || secs <= 0 {
		secs = 30
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cairn-%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: CAIRN_CPUPROFILE: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "cairn: CAIRN_CPUPROFILE: %v\n", err)
		_ = f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	})
}
