package hostconn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// fakePublishStream is a PublishEvents stream fed and read by the test.
type fakePublishStream struct {
	grpc.ServerStream
	ctx  context.Context
	in   chan *pb.PublishRequest
	acks chan *pb.PublishAck
}

func (s *fakePublishStream) Context() context.Context { return s.ctx }

func (s *fakePublishStream) Recv() (*pb.PublishRequest, error) {
	req, ok := <-s.in
	if !ok {
		return nil, io.EOF
	}
	return req, nil
}

func (s *fakePublishStream) Send(a *pb.PublishAck) error {
	s.acks <- a
	return nil
}

// streamHost answers PublishStreamed by the event's type.
type streamHost struct {
	release chan struct{}
}

func (h *streamHost) AskClient(context.Context, seam.Ask) (json.RawMessage, *errs.Error) {
	return nil, nil
}
func (h *streamHost) CallAreaTool(context.Context, seam.ToolCallback) seam.Result {
	return seam.Result{}
}
func (h *streamHost) Publish(seam.Event) (string, error) { return "", nil }

func (h *streamHost) PublishStreamed(ev seam.Event) (func(context.Context) error, string, error) {
	switch ev.Type {
	case "early":
		return nil, "still starting", nil
	case "slow":
		return func(context.Context) error { <-h.release; return nil }, "", nil
	case "bad":
		return func(context.Context) error { return errors.New("store down") }, "", nil
	case "":
		return nil, "", errors.New("event type is required")
	}
	return nil, "", nil
}

// TestPublishEventsAcksInOrder: every streamed event is acknowledged by
// its sequence number, in order: with retry when the host asks for one or
// its wait fails, only after its wait returns, with the reason when the
// host refuses it; the stream goes on after each.
func TestPublishEventsAcksInOrder(t *testing.T) {
	h := &streamHost{release: make(chan struct{})}
	srv := &hostServer{host: h, log: hclog.NewNullLogger()}
	st := &fakePublishStream{ctx: t.Context(), in: make(chan *pb.PublishRequest, 8), acks: make(chan *pb.PublishAck, 8)}
	served := make(chan error, 1)
	go func() { served <- srv.PublishEvents(st) }()

	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "e0", Type: "early"}}
	if a := <-st.acks; a.Seq != 1 || !a.Retry || a.Error != "still starting" {
		t.Fatalf("ack %+v, want seq 1 with retry", a)
	}
	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "e1", Type: "slow"}}
	st.in <- &pb.PublishRequest{Event: &pb.Event{Type: "plain"}}
	select {
	case a := <-st.acks:
		t.Fatalf("acknowledged (%+v) before the slow event's wait returned", a)
	case <-time.After(100 * time.Millisecond):
	}
	close(h.release)
	if a := <-st.acks; a.Seq != 2 || a.Retry || a.Error != "" {
		t.Fatalf("ack %+v, want seq 2 without retry", a)
	}
	if a := <-st.acks; a.Seq != 3 || a.Retry || a.Error != "" {
		t.Fatalf("ack %+v, want seq 3", a)
	}
	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "e3", Type: "bad"}}
	if a := <-st.acks; a.Seq != 4 || !a.Retry || a.Error != "store down" {
		t.Fatalf("ack %+v, want seq 4 with retry after a failed wait", a)
	}
	st.in <- &pb.PublishRequest{}
	if a := <-st.acks; a.Seq != 5 || a.Retry || a.Error != "event type is required" {
		t.Fatalf("ack %+v, want seq 5 refused", a)
	}
	close(st.in)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
