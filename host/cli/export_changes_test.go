package cli

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// The change counter a watch long-polls: a task or thought event on the
// bus answers a waiting poll at once; other events do not count; a poll
// with nothing new answers the same count when its time is up.
func TestChangeCounterAnswersOnTaskEvents(t *testing.T) {
	t.Parallel()
	bus := events.New(hclog.NewNullLogger())
	c := newChangeCounter()
	stop := c.follow(bus)
	defer stop()
	if got := c.wait(context.Background(), 0, 10*time.Millisecond); got != 0 {
		t.Fatalf("nothing happened, yet the count is %d", got)
	}
	answered := make(chan uint64, 1)
	go func() { answered <- c.wait(context.Background(), 0, time.Minute) }()
	bus.Publish(events.Event{Type: "session.started", Source: "host"})
	bus.Publish(events.Event{Type: "task.updated", Source: "core"})
	select {
	case got := <-answered:
		if got != 1 {
			t.Fatalf("count %d after one task event", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("a task event did not answer the waiting poll")
	}
	bus.Publish(events.Event{Type: "thought.recorded", Source: "core"})
	poll.Until(t, time.Minute, "the thought event counted", func() bool { return c.wait(context.Background(), 1, time.Millisecond) == 2 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := c.wait(ctx, 2, time.Minute); got != 2 {
		t.Fatalf("an ended wait answers the count, got %d", got)
	}
}
