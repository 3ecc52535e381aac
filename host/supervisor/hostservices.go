package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/host/events"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// hostServices serves the Host API to one plugin.
type hostServices struct {
	pb.UnimplementedHostServer
	plugin string
	bus    *events.Bus
	log    hclog.Logger
	// askClient routes AskClient to the host; nil refuses.
	askClient func(ctx context.Context, plugin string, req *pb.AskClientRequest) *pb.AskClientResponse
}

// AskClient passes a plugin's request for its caller's client to the host,
// naming the plugin, so one plugin cannot reach another's calls.
func (h *hostServices) AskClient(ctx context.Context, req *pb.AskClientRequest) (*pb.AskClientResponse, error) {
	if h.askClient == nil {
		return &pb.AskClientResponse{Error: &pb.ToolError{Code: "ERR_CLIENT_UNAVAILABLE", Message: "this host cannot ask clients", Status: 501, Details: []byte(`{}`)}}, nil
	}
	return h.askClient(ctx, h.plugin, req), nil
}

func (h *hostServices) Publish(_ context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	if req.Event == nil || strings.TrimSpace(req.Event.Type) == "" {
		return nil, status.Error(codes.InvalidArgument, "event type is required")
	}
	if h.bus == nil {
		return nil, status.Error(codes.Unavailable, "no event bus")
	}
	if len(req.Event.Data) > 0 && !json.Valid(req.Event.Data) {
		return nil, status.Error(codes.InvalidArgument, "event data must be JSON")
	}
	ev := h.bus.Publish(events.Event{Type: req.Event.Type, Source: h.plugin, Data: req.Event.Data})
	return &pb.PublishResponse{Id: ev.ID}, nil
}

// PublishEvents puts a plugin's streamed events on the bus in the order
// they arrive and acknowledges each by its sequence number. A refused event
// is acknowledged with the reason; the stream goes on.
func (h *hostServices) PublishEvents(stream pb.Host_PublishEventsServer) error {
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
		ack := &pb.PublishAck{Seq: seq}
		if _, err := h.Publish(stream.Context(), req); err != nil {
			ack.Error = grpcMessage(err)
			h.log.Warn("plugin event refused", "error", ack.Error)
		}
		if err := stream.Send(ack); err != nil {
			return err
		}
	}
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
