package sdk

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

// Idle trimming: a plugin process spends most of its life waiting. Shortly
// after start-up, and again whenever calls stop for a while, it gives back
// memory it does not need while waiting (trimIdleMemory).
const settleAfterStart = 2 * time.Second

// IdleEnv names the variable that sets how long a plugin goes without
// calls before it trims its memory (a Go duration; default 30s). The
// benchmarks shorten it to measure idle memory without waiting.
const IdleEnv = "CAIRN_PLUGIN_IDLE"

func idlePeriod() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(IdleEnv)); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}

// idleTrimmer counts calls and trims after start-up and after each burst
// of calls followed by idlePeriod without one.
type idleTrimmer struct {
	calls atomic.Uint64
}

func (t *idleTrimmer) called() { t.calls.Add(1) }

func (t *idleTrimmer) run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(settleAfterStart):
	}
	trimIdleMemory()
	trimmedAt := t.calls.Load()
	last := trimmedAt
	tick := time.NewTicker(idlePeriod())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := t.calls.Load()
		if now == last && now != trimmedAt {
			trimIdleMemory()
			trimmedAt = now
		}
		last = now
	}
}
