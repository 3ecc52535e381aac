package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// The suite passes on a loaded machine (docs/decisions.md D42): a wait
// for something another process does on its own time is a poll bounded
// by patience, never a fixed pause or a bound a busy scheduler can
// exceed. A deadline only ends a wait that failed, so a generous one
// costs a passing run nothing.

// patience bounds a wait for another process: a start, an answer, a
// line it writes.
const patience = 60 * time.Second

// stderrSays waits until buf, a process's stderr, holds every one of
// wants, and fails naming those still missing after patience. A process
// may write a line after the answer that prompted the check, or relay it
// from another process.
func stderrSays(t *testing.T, buf *syncBuffer, what string, wants ...string) {
	t.Helper()
	var missing []string
	var text string
	if !poll.Within(patience, func() bool {
		text = buf.String()
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(text, want) {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0
	}) {
		t.Fatalf("%s lacks %q after %s:\n%s", what, missing, patience, text)
	}
}
