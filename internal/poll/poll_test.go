package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWithinReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	if !Within(time.Minute, func() bool { return n.Add(1) == 3 }) {
		t.Fatal("Within gave up on a condition that held at the third look")
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("looked %d times, want 3", got)
	}
}

func TestWithinGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	if Within(3*Interval, func() bool { return false }) {
		t.Fatal("Within reported a condition that never held")
	}
	if took := time.Since(start); took < 3*Interval {
		t.Fatalf("gave up after %s, before the deadline of %s", took, 3*Interval)
	}
}
