package hostconn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Host is what the host does for one plugin process: the services a
// plugin calls (its Host API), in the seam's types.
type Host interface {
	// AskClient passes a plugin's request to the client of one of its
	// running calls and returns the client's result, or the typed error
	// that kept the client from answering.
	AskClient(ctx context.Context, ask seam.Ask) (json.RawMessage, *errs.Error)
	// CallAreaTool runs another area's tool for one of the plugin's running
	// calls, as that call's caller, and returns the tool's outcome (its
	// output, or its typed error or the reason it was refused).
	CallAreaTool(ctx context.Context, call seam.ToolCallback) seam.Result
	// Publish puts an event the plugin published on the bus and returns
	// its id there. Its error (a gRPC status, or any error) goes back to
	// the plugin.
	Publish(ev seam.Event) (id string, err error)
	// PublishStreamed puts an event of the plugin's event stream on the
	// bus. wait, when set, returns once the event's local handlers have
	// (its error asks the publisher to retry); retry, when set, is why
	// the event was not taken and is to be sent again; err refuses it.
	PublishStreamed(ev seam.Event) (wait func(context.Context) error, retry string, err error)
}

// hostServer serves a Host to one plugin as the protocol's Host service.
type hostServer struct {
	pb.UnimplementedHostServer
	host Host
	log  hclog.Logger
}

func (h *hostServer) AskClient(ctx context.Context, req *pb.AskClientRequest) (*pb.AskClientResponse, error) {
	return convert.AnswerToProto(h.host.AskClient(ctx, convert.AskFromProto(req))), nil
}

func (h *hostServer) CallAreaTool(ctx context.Context, req *pb.CallAreaToolRequest) (*pb.CallAreaToolResponse, error) {
	return convert.CallbackResultToProto(h.host.CallAreaTool(ctx, convert.CallbackFromProto(req))), nil
}

func (h *hostServer) Publish(_ context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	id, err := h.host.Publish(convert.PublishFromProto(req))
	if err != nil {
		return nil, err
	}
	return convert.PublishedToProto(id), nil
}

// handlerWait bounds how long an ack waits for the local plugin
// subscribers' handlers; past it the event is acknowledged for retry.
const handlerWait = 30 * time.Second

// PublishEvents puts a plugin's streamed events on the bus in the order
// they arrive and acknowledges each by its sequence number, in order. An
// event the host hands a wait for is acknowledged only once that returns,
// with retry set when it failed; one the host asks to be retried is
// acknowledged at once with retry. Waiting happens off the receiving
// loop, so later events reach the bus meanwhile. A refused event is
// acknowledged with the reason; the stream goes on.
func (h *hostServer) PublishEvents(stream pb.Host_PublishEventsServer) error {
	ctx := stream.Context()
	acks := make(chan pendingAck, 256)
	sendErr := make(chan error, 1)
	go func() {
		defer close(sendErr)
		for a := range acks {
			ack := a.ack
			if a.wait != nil {
				wctx, cancel := context.WithTimeout(ctx, handlerWait)
				if err := a.wait(wctx); err != nil {
					ack.Retry, ack.Error = true, err.Error()
					h.log.Warn("a plugin's handler did not finish an event; its publisher will retry", "id", a.id, "error", ack.Error)
				}
				cancel()
			}
			if err := stream.Send(convert.PublishAckToProto(ack)); err != nil {
				sendErr <- err
				for range acks { // drain so the receiving loop never blocks
				}
				return
			}
		}
	}()
	defer close(acks)
	var seq uint64
	for {
		req, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		seq++
		a := pendingAck{ack: seam.PublishAck{Seq: seq}}
		ev := convert.PublishFromProto(req)
		wait, retry, err := h.host.PublishStreamed(ev)
		switch {
		case err != nil:
			a.ack.Error = statusMessage(err)
			h.log.Warn("plugin event refused", "error", a.ack.Error)
		case retry != "":
			a.ack.Retry, a.ack.Error = true, retry
		case wait != nil:
			a.id, a.wait = ev.ID, wait
		}
		select {
		case acks <- a:
		case err := <-sendErr:
			return err
		}
	}
}

// pendingAck is an ack waiting for its event's local handlers.
type pendingAck struct {
	ack  seam.PublishAck
	id   string
	wait func(context.Context) error
}

// statusMessage is an error's message without gRPC's status prefix.
func statusMessage(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}
