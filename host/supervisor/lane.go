package supervisor

import (
	"context"
	"os"

	"github.com/cairn-mcp/cairn/sdk/protocol"
	"github.com/cairn-mcp/cairn/sdk/protocol/lane"
)

// dialLane connects to the call lane the plugin named in its Configure
// answer: from then on the lane is the plugin's call transport
// (docs/decisions.md D34). Without one (a plugin on an older SDK), or when
// the dial fails, it returns nil and every call takes the CallTool stream.
// CAIRN_CALL_LANE=off keeps every call on the stream (to compare the two,
// or to rule the lane out).
func (p *Plugin) dialLane(ctx context.Context, path string) *lane.Client {
	if path == "" || os.Getenv("CAIRN_CALL_LANE") == "off" {
		return nil
	}
	c, err := lane.Dial(ctx, path, protocol.MaxMessageBytes)
	if err != nil {
		p.log.Warn("plugin offers a call lane the host cannot reach; calls use gRPC", "error", err)
		return nil
	}
	return c
}

// dropLane stops using a lane whose connection ended: later calls to the
// same process take the CallTool stream (a crash replaces the lane on
// restart).
func (p *Plugin) dropLane(c *lane.Client) {
	p.mu.Lock()
	if p.lane == c {
		p.lane = nil
	}
	p.mu.Unlock()
	_ = c.Close()
}

func closeLane(c *lane.Client) {
	if c != nil {
		_ = c.Close()
	}
}
