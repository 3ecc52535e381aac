package supervisor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// deliverTimeout bounds one delivery to the plugin: an event, or a batch.
const deliverTimeout = 15 * time.Second

// batchLane is the lane to send event batches on: nil when the running
// process has no lane or its lane does not take batches (an older SDK),
// and then events go one by one.
func (p *Process) batchLane() *hostconn.Lane {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.laneBatches {
		return nil
	}
	return p.lane
}

// deliverBatch runs the plugin's handlers for the events the bus had
// queued for it, in order, and returns each event's outcome for a
// publisher that awaits it. Over a lane that takes batches they go in one
// frame; otherwise (gRPC, an older plugin) one by one, as deliver does.
func (p *Process) deliverBatch(evs []events.Event) []error {
	outcomes := make([]error, len(evs))
	// A plugin that is opening takes its events once it is open
	// (opening.go), whatever transport they then take.
	if err := p.awaitOpen(context.Background(), time.Now()); err != nil {
		p.log.Warn("events not delivered", "events", len(evs), "error", err)
		for i := range outcomes {
			outcomes[i] = fmt.Errorf("plugin %s did not take the event: %w", p.spec.Name, err)
		}
		return outcomes
	}
	calls := p.batchLane()
	if calls == nil || len(evs) == 1 {
		for i, ev := range evs {
			outcomes[i] = p.deliver(ev)
		}
		return outcomes
	}
	// A plugin does not hear its own events.
	idx := make([]int, 0, len(evs))
	req := make([]seam.Event, 0, len(evs))
	for i, ev := range evs {
		if ev.Source == p.spec.Name {
			continue
		}
		idx = append(idx, i)
		req = append(req, seamEvent(ev))
	}
	if len(req) == 0 {
		return outcomes
	}
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	got, err := calls.DeliverBatch(ctx, req)
	if errors.Is(err, hostconn.ErrLaneClosed) {
		p.dropLane(calls)
	}
	for j, i := range idx {
		if got[j] != nil {
			ev := evs[i]
			p.log.Warn("plugin failed to handle event", "event", ev.Type, "id", ev.ID, "error", grpcMessage(got[j]))
			outcomes[i] = fmt.Errorf("plugin %s failed to handle the event: %s", p.spec.Name, grpcMessage(got[j]))
		}
	}
	return outcomes
}
