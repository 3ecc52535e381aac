//go:build unix

package engine

import (
	"io/fs"
	"syscall"
)

// openNonblock makes opening a FIFO return at once instead of waiting for
// a writer; it changes nothing for a regular file.
const openNonblock = syscall.O_NONBLOCK

// linkCount is the number of hard links of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
