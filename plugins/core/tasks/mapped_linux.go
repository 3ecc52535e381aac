package tasks

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped drops the pages of a bbolt store's file from this
// process's page tables. bbolt reads through a shared read-only mapping of
// the file, and every page a long run of transactions reads stays mapped:
// an import of 100,000 tasks left some 170 MB of the file resident in the
// core area, growing with the store, on top of the memory the import
// itself holds (docs/decisions.md D41). The pages stay in the page cache
// and come back on the next read, a minor fault each. Call it only inside
// a transaction: bbolt remaps the file only while committing a write,
// after every read transaction has ended, so the mapping cannot move, and
// its address be reused, under the call.
func releaseMapped(db *bolt.DB) {
	if db == nil {
		return
	}
	base := db.Info().Data
	end := mappingEnd(base)
	if end <= base {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, base, end-base, syscall.MADV_DONTNEED)
}

// mappingEnd is the end of this process's mapping that starts at base, 0
// when there is none (from /proc/self/maps: "start-end perms …").
func mappingEnd(base uintptr) uintptr {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(maps) {
		r, _, _ := bytes.Cut(line, []byte{' '})
		lo, hi, ok := bytes.Cut(r, []byte{'-'})
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil && uintptr(start) == base {
			return uintptr(end)
		}
	}
	return 0
}
