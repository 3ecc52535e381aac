package supervisor

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// describeFunc asks a plugin for its description and tools.
type describeFunc func(ctx context.Context, rpc *hostconn.Conn) (seam.Description, []seam.Tool, error)

// describeAfterConfigure asks once the plugin is configured: a plugin from
// outside the binary may declare tools in its configure hook.
func describeAfterConfigure(ctx context.Context, rpc *hostconn.Conn) (seam.Description, []seam.Tool, error) {
	return rpc.Describe(ctx)
}

// describeBesideConfigure asks at once, while the plugin configures, and
// returns the answer's reader. A built-in area declares its tools and
// subscriptions when it is built, before it serves (their snapshots are
// taken from the built area, unconfigured), so the answer is the same;
// and the round trip is off a cold start's path to its first answer.
func describeBesideConfigure(ctx context.Context, rpc *hostconn.Conn) describeFunc {
	type described struct {
		desc  seam.Description
		tools []seam.Tool
		err   error
	}
	answer := make(chan described, 1)
	go func() {
		desc, tools, err := rpc.Describe(ctx)
		answer <- described{desc, tools, err}
	}()
	return func(context.Context, *hostconn.Conn) (seam.Description, []seam.Tool, error) {
		a := <-answer
		return a.desc, a.tools, a.err
	}
}
