package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/host/events"
	hostplugin "github.com/cairn-mcp/cairn/host/plugin"
	"github.com/cairn-mcp/cairn/host/plugin/convert"
	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// hostServices serves the Host API to one plugin.
type hostServices struct {
	pb.UnimplementedHostServer
	plugin string
	bus    *events.Bus
	log    hclog.Logger
	// askClient routes AskClient to the host; nil refuses.
	askClient func(ctx context.Context, plugin string, ask hostplugin.Ask) (json.RawMessage, *errs.Error)
}

// AskClient passes a plugin's request for its caller's client to the host,
// naming the plugin, so one plugin cannot reach another's calls.
func (h *hostServices) AskClient(ctx context.Context, req *pb.AskClientRequest) (*pb.AskClientResponse, error) {
	if h.askClient == nil {
		return convert.AnswerToProto(nil, errs.New(501, "ERR_CLIENT_UNAVAILABLE", "this host cannot ask clients")), nil
	}
	return convert.AnswerToProto(h.askClient(ctx, h.plugin, convert.AskFromProto(req))), nil
}

func (h *hostServices) Publish(_ context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	ev, err := h.event(req)
	if err != nil {
		return nil, err
	}
	return &pb.PublishResponse{Id: h.bus.Publish(ev).ID}, nil
}

// event checks a published event. An event that carries its id (and time)
// keeps them: a durable publisher assigned them when it recorded the event,
// so a redelivery is recognisably the same event.
func (h *hostServices) event(req *pb.PublishRequest) (events.Event, error) {
	if req.Event == nil || strings.TrimSpace(req.Event.Type) == "" {
		return events.Event{}, status.Error(codes.InvalidArgument, "event type is required")
	}
	if h.bus == nil {
		return events.Event{}, status.Error(codes.Unavailable, "no event bus")
	}
	if len(req.Event.Data) > 0 && !json.Valid(req.Event.Data) {
		return events.Event{}, status.Error(codes.InvalidArgument, "event data must be JSON")
	}
	return events.Event{ID: req.Event.Id, Type: req.Event.Type, Source: h.plugin, Time: req.Event.Time, Data: req.Event.Data}, nil
}

// handlerWait bounds how long an ack waits for the local plugin
// subscribers' handlers; past it the event is acknowledged for retry.
const handlerWait = 30 * time.Second

// PublishEvents puts a plugin's streamed events on the bus in the order
// they arrive and acknowledges each by its sequence number, in order. An
// event without an id is acknowledged once it is on the bus; one with its
// own id (a durable publisher's) only once every local plugin subscriber's
// handler has returned, with retry set when one failed — or at once with
// retry while the server's plugins have not all subscribed. Waiting happens
// off the receiving loop, so later events reach the bus meanwhile. A
// refused event is acknowledged with the reason; the stream goes on.
func (h *hostServices) PublishEvents(stream pb.Host_PublishEventsServer) error {
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
			if err := stream.Send(ack); err != nil {
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
		a := pendingAck{ack: &pb.PublishAck{Seq: seq}}
		ev, err := h.event(req)
		switch {
		case err != nil:
			a.ack.Error = grpcMessage(err)
			h.log.Warn("plugin event refused", "error", a.ack.Error)
		case ev.ID != "" && !h.bus.Subscribed():
			// Not every plugin has subscribed yet: the event could not be
			// handled by all of them, so its publisher keeps it for later.
			a.ack.Retry, a.ack.Error = true, "the server is still starting its plugins"
		case ev.ID != "":
			a.id = ev.ID
			_, a.wait = h.bus.PublishAwait(ev)
		default:
			h.bus.Publish(ev)
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
	ack  *pb.PublishAck
	id   string
	wait func(context.Context) error
}

func (h *hostServices) Log(_ context.Context, req *pb.LogRequest) (*pb.LogResponse, error) {
	var fields map[string]any
	if len(req.Fields) > 0 {
		_ = json.Unmarshal(req.Fields, &fields)
	}
	args := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		args = append(args, k, v)
	}
	level := hclog.LevelFromString(req.Level)
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	h.log.Log(level, req.Message, args...)
	return &pb.LogResponse{}, nil
}
