//go:build !race

package core

// streamTestSize is the input TestImportStreams imports.
const streamTestSize = 50 << 20
