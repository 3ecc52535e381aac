package supervisor

import (
	"context"
	"os"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// dialLane connects to the call lane the plugin named in its Configure
// answer: from then on the lane is the plugin's call transport
// (docs/decisions.md D34). Without one (a plugin on an older SDK), or when
// the dial fails, it returns nil and every call takes the CallTool stream.
// CAIRN_CALL_LANE=off keeps every call on the stream (to compare the two,
// or to rule the lane out).
func (p *Process) dialLane(ctx context.Context, path string) *hostconn.Lane {
	if path == "" || os.Getenv("CAIRN_CALL_LANE") == "off" {
		return nil
	}
	c, err := hostconn.DialLane(ctx, path)
	if err != nil {
		p.log.Warn("plugin offers a call lane the host cannot reach; calls use gRPC", "error", err)
		return nil
	}
	return c
}

// dropLane stops using a lane whose connection ended: later calls to the
// same process take the CallTool stream (a crash replaces the lane on
// restart).
func (p *Process) dropLane(c *hostconn.Lane) {
	p.mu.Lock()
	if p.lane == c {
		p.lane = nil
	}
	p.mu.Unlock()
	_ = c.Close()
}

func closeLane(c *hostconn.Lane) {
	if c != nil {
		_ = c.Close()
	}
}

// seamEvent is a bus event as it crosses to a plugin.
func seamEvent(ev events.Event) seam.Event {
	return seam.Event{ID: ev.ID, Type: ev.Type, Source: ev.Source, Time: ev.Time, Data: ev.Data}
}
