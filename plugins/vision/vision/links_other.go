//go:build !unix

package vision

import "io/fs"

// openNonBlock is zero where opening cannot block on a FIFO.
const openNonBlock = 0

// linkCount is unknown here; the regular-file check still applies.
func linkCount(fs.FileInfo) (uint64, bool) { return 0, false }
