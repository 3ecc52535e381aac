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
// touched. A built-in plugin runs a binary of 50–60 MB (cairn-areas, or
// cairn itself), so each process would otherwise keep many MB of its code
// and read-only data resident. The dropped pages are clean and file-backed: one that is needed
// again is mapped back from the page cache on first touch.
func trimIdleMemory() {
	runtime.GC()
	debug.FreeOSMemory()
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	type span struct {
		start, end uintptr
		// anon counts pages of the mapping copied on write (kB): a
		// relocated GOT (RELRO) is read-only yet holds such pages, and
		// dropping them would undo the relocation.
		anon int64
		ok   bool
	}
	var spans []span
	var cur *span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, isRange := strings.Cut(fields[0], "-"); isRange && len(fields) >= 5 {
			// A mapping header: start-end perms offset dev inode [path].
			spans = append(spans, span{})
			cur = &spans[len(spans)-1]
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			perms := fields[1]
			// Only code and read-only data of our own executable.
			cur.ok = err1 == nil && err2 == nil && end > start && len(fields) >= 6 &&
				fields[5] == exe && (perms == "r-xp" || perms == "r--p")
			cur.start, cur.end = uintptr(start), uintptr(end)
			continue
		}
		if cur != nil && fields[0] == "Anonymous:" && len(fields) >= 2 {
			cur.anon, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	if sc.Err() != nil {
		return
	}
	for _, s := range spans {
		if s.ok && s.anon == 0 {
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, syscall.MADV_DONTNEED)
		}
	}
}
