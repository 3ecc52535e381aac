package lane

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// DeliverBatch hands several bus events to the plugin, to be run in order,
// and waits until their handlers ran. Only a plugin whose ConfigureResponse
// set lane_event_batches takes the frame. outcomes has one entry per event:
// nil when its handlers succeeded, else their failure as a typed error.
//
// A batch whose frame would exceed the limit is never sent: it is split
// into frames that fit, sent one after another so the order holds; an
// event over the limit on its own gets ERR_LIMIT_EXCEEDED as its outcome.
// err is set when the lane itself failed (ErrClosed, ctx ended): then the
// events not answered before carry err as their outcome too.
func (c *Client) DeliverBatch(ctx context.Context, evs []*pb.Event) (outcomes []error, err error) {
	outcomes = make([]error, len(evs))
	if len(evs) == 0 {
		return outcomes, nil
	}
	return outcomes, c.deliverBatch(ctx, evs, outcomes)
}

// deliverBatch sends evs in one frame, or in halves when that frame would
// be over the limit, and fills outcomes (as long as evs).
func (c *Client) deliverBatch(ctx context.Context, evs []*pb.Event, outcomes []error) error {
	what := "the event batch"
	if len(evs) == 1 {
		what = "the event"
	}
	frame, err := c.encode(ctx, convert.HandleEventsToProto(evs), what, "events")
	if err != nil {
		if e, ok := errs.As(err); ok && e.Code == errs.LimitExceeded {
			if len(evs) == 1 {
				outcomes[0] = e
				return nil
			}
			half := len(evs) / 2
			if err := c.deliverBatch(ctx, evs[:half], outcomes[:half]); err != nil {
				fill(outcomes[half:], err)
				return err
			}
			return c.deliverBatch(ctx, evs[half:], outcomes[half:])
		}
		fill(outcomes, err)
		return err
	}
	a := c.send(ctx, kindEvents, frame, waiter{ch: make(chan answer, 1), batch: true})
	if a.err != nil {
		fill(outcomes, a.err)
		return a.err
	}
	if e := a.batch.GetError(); e != nil {
		fill(outcomes, errorFromProto(e)) // the plugin refused the batch: none ran
		return nil
	}
	if len(a.batch.Outcomes) != len(evs) {
		fill(outcomes, errs.Newf(502, errs.PluginUnavailable, "the plugin answered %d outcomes for a batch of %d events", len(a.batch.Outcomes), len(evs)))
		return nil
	}
	for i, o := range a.batch.Outcomes {
		outcomes[i] = errorFromProto(o.GetError())
	}
	return nil
}

func fill(outcomes []error, err error) {
	for i := range outcomes {
		outcomes[i] = err
	}
}
