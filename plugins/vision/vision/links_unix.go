//go:build unix

package vision

import (
	"io/fs"
	"syscall"
)

// openNonBlock makes opening a FIFO return at once instead of waiting for
// a writer.
const openNonBlock = syscall.O_NONBLOCK

// linkCount is the file's number of hard links.
func linkCount(st fs.FileInfo) (uint64, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink), true
	}
	return 0, false
}
