//go:build race

package store

// raceDetector is true in a -race build, whose slower writes make the
// million-record test take minutes.
const raceDetector = true
