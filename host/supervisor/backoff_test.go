package supervisor

import (
	"testing"
	"time"
)

func TestBackoffSchedule(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name     string
		b        Backoff
		failures int
		want     time.Duration
	}{
		{"default first", Backoff{}, 1, 100 * ms},
		{"zero failures waits the initial delay", Backoff{}, 0, 100 * ms},
		{"default second", Backoff{}, 2, 200 * ms},
		{"default ninth", Backoff{}, 9, 25600 * ms},
		{"default capped", Backoff{}, 10, 30 * time.Second},
		{"default stays capped", Backoff{}, 1000, 30 * time.Second},
		{"custom cap", Backoff{Initial: 10 * ms, Max: 35 * ms}, 3, 35 * ms},
		{"custom below cap", Backoff{Initial: 10 * ms, Max: 35 * ms}, 2, 20 * ms},
		{"max below initial", Backoff{Initial: time.Second, Max: ms}, 5, time.Second},
		{"no overflow", Backoff{Initial: time.Nanosecond, Max: time.Duration(1<<62) + 1}, 200, time.Duration(1<<62) + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.Delay(c.failures); got != c.want {
				t.Fatalf("Delay(%d) = %s, want %s", c.failures, got, c.want)
			}
		})
	}
}

// TestBackoffIsMonotonic: the wait never shrinks as failures add up.
func TestBackoffIsMonotonic(t *testing.T) {
	b := DefaultBackoff
	prev := time.Duration(0)
	for n := 1; n < 100; n++ {
		d := b.Delay(n)
		if d < prev || d > b.Max {
			t.Fatalf("Delay(%d) = %s after %s (max %s)", n, d, prev, b.Max)
		}
		prev = d
	}
}

func TestBackoffDefaults(t *testing.T) {
	got := Backoff{}.withDefaults()
	if got != DefaultBackoff {
		t.Fatalf("defaults = %+v", got)
	}
	if DefaultBackoff.Max != 30*time.Second || DefaultBackoff.Initial != 100*time.Millisecond || DefaultBackoff.Reset != time.Minute {
		t.Fatalf("DefaultBackoff = %+v", DefaultBackoff)
	}
}
