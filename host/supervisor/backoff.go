package supervisor

import "time"

// Backoff is the restart schedule of a crashing plugin: the wait before
// attempt n (n consecutive failures) is Initial·2^(n-1), capped at Max. A
// plugin that stayed up for Reset or longer before it crashed starts again
// from Initial. There is no last attempt: giving up would leave the
// plugin's tools dead until someone restarts cairn.
type Backoff struct {
	Initial, Max, Reset time.Duration
}

// DefaultBackoff: 100 ms, 200 ms, ... up to 30 s; reset after a minute up.
var DefaultBackoff = Backoff{Initial: 100 * time.Millisecond, Max: 30 * time.Second, Reset: time.Minute}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoff.Initial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoff.Max
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Reset <= 0 {
		b.Reset = DefaultBackoff.Reset
	}
	return b
}

// Delay is the wait after the given number of consecutive failures (a
// crash, or a failed restart attempt); 0 or fewer failures wait Initial.
func (b Backoff) Delay(failures int) time.Duration {
	b = b.withDefaults()
	d := b.Initial
	for i := 1; i < failures; i++ {
		if d >= b.Max/2 {
			return b.Max
		}
		d *= 2
	}
	if d > b.Max {
		return b.Max
	}
	return d
}
