package core

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/outbox"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// recordEventIn records a write's event in st's outbox, inside the write's
// transaction: once the write commits, its event is published
// even if this server dies before publishing it. The store hands it to the
// drainer when the commit returns.
func recordEventIn(st *store.Store) func(tx kv.Tx, eventType string, data map[string]any, at time.Time) error {
	return func(tx kv.Tx, eventType string, data map[string]any, at time.Time) error {
		_, err := st.RecordEvent(tx, eventType, data, at)
		return err
	}
}

// committed runs after a write committed (its event is already on its
// way, see recordEventIn): subscribed clients hear which resources changed.
func (c *Area) committed(eventType string, data any) {
	if m, ok := data.(map[string]any); ok {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		c.linkResources(ctx, eventType, m)
	}
}

// startDrainer starts publishing st's outbox: at once (what a crash left
// pending), each write's event as its commit returns, and every second
// (entries of a dead server whose lease lapsed, on PostgreSQL).
func (c *Area) startDrainer(st *store.Store) {
	d := outbox.New(st, c.publishRecorded, outbox.Options{Log: c.p.Logger().Named("outbox")})
	ctx, cancel := context.WithCancel(context.Background())
	done := d.Start(ctx)
	c.mu.Lock()
	c.drainStop = func() { cancel(); <-done }
	c.mu.Unlock()
}

// stopDrainer ends the drainer before the store closes; entries it had
// not seen handled stay in the outbox for the next drainer.
func (c *Area) stopDrainer() {
	c.mu.Lock()
	stop := c.drainStop
	c.drainStop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// publishRecorded hands one outbox event to the host under its recorded id
// and time; done hears when every other area's handler has returned.
// An event the host refuses as malformed is dropped (with a log line):
// publishing it again would be refused again.
func (c *Area) publishRecorded(ev store.OutboxEvent, done func(error)) error {
	return c.p.PublishDurable(sdk.Event{ID: ev.ID, Type: ev.Type, Time: ev.Time, Data: ev.Data}, func(err error) {
		if errors.Is(err, sdk.ErrEventRefused) {
			c.p.Logger().Error("recorded event refused by the host; dropped", "event", ev.Type, "id", ev.ID, "error", err)
			err = nil
		}
		done(err)
	})
}
