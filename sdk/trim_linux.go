package sdk

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// trimIdleMemory gives back what start-up used and serving does not need:
// the garbage of building the tool declarations (heap returned to the OS)
// and the pages of the executable that only package initialisation
// touched. Every built-in plugin runs the whole cairn binary, so each
// process would otherwise keep some 20 MB of its code and read-only data
// resident. The dropped pages are clean and file-backed: one that is needed
// again is mapped back from the page cache on first touch.
func trimIdleMemory() {
	runtime.GC()
	debug.FreeOSMemory()
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	type span struct{ start, end uintptr }
	var spans []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		// Only clean, shared-with-the-file pages: code and read-only
		// data. A writable mapping holds the program's variables.
		if perms := fields[1]; perms != "r-xp" && perms != "r--p" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		spans = append(spans, span{uintptr(start), uintptr(end)})
	}
	for _, s := range spans {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, syscall.MADV_DONTNEED)
	}
}
