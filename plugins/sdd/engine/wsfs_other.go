//go:build !unix

package engine

import "io/fs"

// openNonblock: no such flag outside Unix; FIFOs are refused by the
// regular-file check made before opening.
const openNonblock = 0

// linkCount: the link count is not portable outside Unix; one is assumed.
func linkCount(fs.FileInfo) uint64 { return 1 }
