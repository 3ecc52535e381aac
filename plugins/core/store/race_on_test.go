//go:build race

package store

// raceDetector is true in a -race build, whose tenfold slower writes put
// the million-record test beyond what it proves (a plain build runs it).
const raceDetector = true
