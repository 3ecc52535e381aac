//go:build !unix

package plainfile

import "io/fs"

// OpenNonblock is zero where opening cannot block on a FIFO.
const OpenNonblock = 0

// LinkCount is unknown here; the regular-file check still applies.
func LinkCount(fs.FileInfo) (uint64, bool) { return 0, false }
