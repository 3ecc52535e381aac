//go:build race

package core

// streamTestSize is the input TestImportStreams imports: smaller under the
// race detector, whose writes are several times slower, and which looks
// for races, not for memory.
const streamTestSize = 10 << 20
