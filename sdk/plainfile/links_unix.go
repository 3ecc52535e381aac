//go:build unix

package plainfile

import (
	"io/fs"
	"syscall"
)

// OpenNonblock, or-ed into the open flags, makes opening a FIFO return at
// once instead of waiting for a writer; it changes nothing for a file.
const OpenNonblock = syscall.O_NONBLOCK

// LinkCount is the number of hard links of the file fi describes; ok is
// false where the platform does not say.
func LinkCount(fi fs.FileInfo) (n uint64, ok bool) {
	if st, isStat := fi.Sys().(*syscall.Stat_t); isStat {
		return uint64(st.Nlink), true
	}
	return 0, false
}
