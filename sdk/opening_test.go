package sdk

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// A plugin's open work runs after the host has its Configure answer, and
// its health says "opening" with the step until the work is done
// (docs/decisions.md D34).
func TestOpenWorkRunsAfterConfigureAndShowsInHealth(t *testing.T) {
	shortGrace(t)
	p := New("opener", "1.0.0")
	release := make(chan struct{})
	stepped := make(chan struct{})
	p.AddHooks(Hooks{Open: func(ctx context.Context, cfg Config, report func(string)) error {
		report("indexing 3 of 7 pages")
		close(stepped)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	p.AddHooks(Hooks{Health: func(context.Context) Health { return Health{Status: "ok", Message: "own health"} }})
	s := &server{p: p}
	ctx := context.Background()

	// Configure answers while the work is held; health already says so.
	if _, err := s.Configure(ctx, &pb.ConfigureRequest{DataDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	h, err := s.Health(ctx, &pb.HealthRequest{})
	if err != nil || h.Status != HealthOpening {
		t.Fatalf("health right after Configure = %+v, %v; want opening", h, err)
	}
	<-stepped
	h, _ = s.Health(ctx, &pb.HealthRequest{})
	if !strings.Contains(h.Message, "indexing 3 of 7 pages") || !strings.Contains(string(h.Details), `"step":"indexing 3 of 7 pages"`) {
		t.Fatalf("health while opening = %q %s", h.Message, h.Details)
	}

	// Stop does not run the stop hooks beside the work: within a deadline
	// the work cannot meet, it cancels it and waits for it to return.
	stopped := false
	p.AddHooks(Hooks{Stop: func(context.Context) error { stopped = true; return nil }})
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.stop(short); err != nil {
		t.Fatalf("stop while opening: %v", err)
	}
	if !stopped {
		t.Fatal("stop hooks did not run once the cancelled work returned")
	}
	if h, _ := s.Health(ctx, &pb.HealthRequest{}); h.Status != "ok" || h.Message != "own health" {
		t.Fatalf("health once the work returned = %+v", h)
	}
}

// In process (tests, embedding), Configure returns once the work is done.
func TestConfigureInProcessRunsTheOpenWork(t *testing.T) {
	p := New("opener", "1.0.0")
	done := false
	p.AddHooks(Hooks{Configure: func(context.Context, Config) error {
		if done {
			t.Error("the Open hook ran before the Configure hook")
		}
		return nil
	}})
	p.AddHooks(Hooks{Open: func(_ context.Context, cfg Config, report func(string)) error {
		report("opening " + cfg.DataDir)
		done = true
		return nil
	}})
	if err := p.start(context.Background(), Config{DataDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatal("Configure returned before the open work ran")
	}
	if h := p.healthReport(context.Background()); h.Status != "ok" {
		t.Fatalf("health once open = %+v", h)
	}
}

// Work that does not heed its cancellation keeps the stop hooks from
// running: Stop gives up at its deadline with an error instead.
func TestStopDoesNotRunHooksBesideOpenWork(t *testing.T) {
	shortGrace(t)
	p := New("opener", "1.0.0")
	release := make(chan struct{})
	p.AddHooks(Hooks{Open: func(context.Context, Config, func(string)) error {
		<-release
		return nil
	}})
	stopped := make(chan struct{}, 2)
	p.AddHooks(Hooks{Stop: func(context.Context) error { stopped <- struct{}{}; return nil }})
	s := &server{p: p}
	if _, err := s.Configure(context.Background(), &pb.ConfigureRequest{DataDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.stop(short); err == nil || !strings.Contains(err.Error(), "still opening") {
		t.Fatalf("stop beside running open work = %v, want an error saying it is still opening", err)
	}
	select {
	case <-stopped:
		t.Fatal("stop hooks ran beside the open work")
	default:
	}
	close(release)
	if err := p.stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-stopped
}

// Work done within the grace answers Configure as a hook would: its
// error refuses the start, and the process is not ended.
func TestQuickOpenErrorRefusesConfigure(t *testing.T) {
	p := New("opener", "1.0.0")
	p.AddHooks(Hooks{Open: func(context.Context, Config, func(string)) error {
		return NewError(500, "ERR_INIT_FAILED", "index unreadable")
	}})
	_, err := (&server{p: p}).Configure(context.Background(), &pb.ConfigureRequest{DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "ERR_INIT_FAILED: index unreadable") {
		t.Fatalf("Configure with a failing quick open = %v", err)
	}
	if h := p.healthReport(context.Background()); h.Status == HealthOpening {
		t.Fatalf("health after a failed quick open = %+v", h)
	}
}

// shortGrace lets Configure answer after 10 ms of open work instead of
// openGrace, for the length of the test.
func shortGrace(t *testing.T) {
	old := openGrace
	openGrace = 10 * time.Millisecond
	t.Cleanup(func() { openGrace = old })
}

// A host that allows a start little time still gets its answer: Configure
// waits for the open work at most half of what is left of its deadline.
func TestOpenGraceFitsTheHostsDeadline(t *testing.T) {
	if g := openGraceWithin(context.Background()); g != openGrace {
		t.Fatalf("grace without a deadline = %v, want %v", g, openGrace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if g := openGraceWithin(ctx); g > time.Second || g <= 0 {
		t.Fatalf("grace within a 2 s deadline = %v, want at most 1 s", g)
	}
}
