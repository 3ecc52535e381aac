// Package poll lets a test wait for what background work makes true instead
// of sleeping for a guessed time: the wait ends as soon as the condition
// holds, and the deadline, which only ends a wait that failed, can be
// generous because a loaded machine is slow.
package poll

import (
	"testing"
	"time"
)

// Interval is how long Until waits between two looks at the condition.
const Interval = 10 * time.Millisecond

// Until calls cond until it returns true, failing t with what if deadline
// passes first.
func Until(t testing.TB, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(deadline, cond) {
		t.Fatalf("timed out after %s waiting for %s", deadline, what)
	}
}

// Within calls cond until it returns true or deadline passes, and reports
// whether it held: for a caller that fails in its own words.
func Within(deadline time.Duration, cond func() bool) bool {
	end := time.Now().Add(deadline)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for !cond() {
		if !time.Now().Before(end) {
			return false
		}
		<-tick.C
	}
	return true
}
