package hostconn

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// ErrLaneClosed is the error of a call on a lane whose connection ended.
var ErrLaneClosed = lane.ErrClosed

// Lane is the call lane a plugin offers beside its gRPC connection: a
// direct framed socket that carries tool calls and bus events with fewer
// hand-offs between goroutines (docs/decisions.md D34).
type Lane struct {
	c *lane.Client
}

// DialLane connects to the lane at path, the socket the plugin named in
// its Configured answer.
func DialLane(ctx context.Context, path string) (*Lane, error) {
	c, err := lane.Dial(ctx, path, protocol.MaxMessageBytes)
	if err != nil {
		return nil, err
	}
	return &Lane{c: c}, nil
}

// Close ends the lane's connection; calls in flight fail with
// ErrLaneClosed.
func (l *Lane) Close() error { return l.c.Close() }

// Call runs one call on the lane, handing its progress and log lines to
// onProgress and onLog (either may be nil) ahead of its result.
func (l *Lane) Call(ctx context.Context, call seam.Call, onProgress func(seam.Progress), onLog func(seam.LogLine)) (*seam.Result, error) {
	var progress func(*pb.Progress)
	if onProgress != nil {
		progress = func(p *pb.Progress) { onProgress(convert.ProgressFromProto(p)) }
	}
	var log func(*pb.LogMessage)
	if onLog != nil {
		log = func(m *pb.LogMessage) { onLog(convert.LogLineFromProto(m)) }
	}
	res, err := l.c.Call(ctx, convert.CallToProto(call), progress, log)
	if err != nil {
		return nil, err
	}
	return convert.ResultFromProto(res), nil
}

// Deliver runs the plugin's handlers for one bus event.
func (l *Lane) Deliver(ctx context.Context, ev seam.Event) error {
	return l.c.Deliver(ctx, convert.HandleEventToProto(ev))
}

// DeliverBatch runs the plugin's handlers for several events in order, in
// one frame, and returns each event's outcome; err is set when the lane
// itself failed (then every outcome is that error).
func (l *Lane) DeliverBatch(ctx context.Context, evs []seam.Event) (outcomes []error, err error) {
	req := make([]*pb.Event, len(evs))
	for i, ev := range evs {
		req[i] = convert.EventToProto(ev)
	}
	return l.c.DeliverBatch(ctx, req)
}
