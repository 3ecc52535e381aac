package startgc

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// Collection is off from init, under a memory limit, until Done restores
// what GOGC and GOMEMLIMIT asked for.
func TestOffUntilDone(t *testing.T) {
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent after init = %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != startLimit {
		t.Fatalf("memory limit after init = %d, want %d", l, startLimit)
	}
	Done()
	want := 100
	if v, err := strconv.Atoi(os.Getenv("GOGC")); err == nil {
		want = v
	}
	if p := debug.SetGCPercent(want); p != want {
		t.Errorf("GC percent after Done = %d, want %d", p, want)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Errorf("memory limit after Done = %d, want none", l)
		}
	}
	debug.SetGCPercent(-1)
	Done() // a second call changes nothing
	if p := debug.SetGCPercent(want); p != -1 {
		t.Errorf("a second Done changed the GC percent to %d", p)
	}
}

// Steady chooses the running percent when GOGC did not; once Done ran it
// applies at once. A GOGC of the operator's wins over it.
func TestSteady(t *testing.T) {
	Done()
	defer debug.SetGCPercent(100)
	saved := gogcSet
	defer func() { gogcSet = saved }()

	gogcSet = false
	Steady(300)
	if p := debug.SetGCPercent(300); p != 300 {
		t.Errorf("GC percent after Steady(300) = %d, want 300", p)
	}

	gogcSet = true
	debug.SetGCPercent(150)
	Steady(400)
	if p := debug.SetGCPercent(150); p != 150 {
		t.Errorf("with GOGC set, Steady changed the GC percent to %d", p)
	}
}
