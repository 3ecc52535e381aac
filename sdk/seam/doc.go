// Package seam is the boundary between the cairn host and its plugins:
// the friendly types both ends share (a call's caller, event patterns, ...)
// and the one conversion of each to the plugin protocol
// (docs/decisions.md D34). The host and the SDK both use these types, so
// a type that crosses the boundary is written once.
package seam
