package supervisor

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/cairn-mcp/cairn/host/events"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
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

// TestPublishEventsAcksAnEventWithIDAfterLocalHandlers: an event that
// carries its id is acknowledged only once the local plugin subscribers'
// handlers returned, with retry when one failed; the event keeps its id
// and time on the bus. An event without an id is acknowledged once on the
// bus.
func TestPublishEventsAcksAnEventWithIDAfterLocalHandlers(t *testing.T) {
	bus := events.New(hclog.NewNullLogger())
	release := make(chan struct{})
	seen := make(chan events.Event, 8)
	defer bus.SubscribeLocalBatch("admin", []string{"*"}, oneByOne(func(ev events.Event) error {
		seen <- ev
		if ev.Type == "task.slow" {
			<-release
		}
		if ev.Type == "task.bad" {
			return errors.New("admin store down")
		}
		return nil
	}))()
	h := &hostServices{plugin: "core", bus: bus, log: hclog.NewNullLogger()}
	st := &fakePublishStream{ctx: t.Context(), in: make(chan *pb.PublishRequest, 8), acks: make(chan *pb.PublishAck, 8)}
	served := make(chan error, 1)
	go func() { served <- h.PublishEvents(st) }()

	// Before every plugin has subscribed, a durable event is handed back.
	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "evt_0", Type: "task.early", Data: []byte(`{}`)}}
	if a := <-st.acks; a.Seq != 1 || !a.Retry {
		t.Fatalf("ack %+v, want seq 1 with retry before the plugins subscribed", a)
	}
	bus.MarkSubscribed()

	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "evt_1", Type: "task.slow", Time: "2026-01-01T00:00:00.000Z", Data: []byte(`{}`)}}
	ev := <-seen
	if ev.ID != "evt_1" || ev.Time != "2026-01-01T00:00:00.000Z" || ev.Source != "core" {
		t.Fatalf("bus got %+v; want the publisher's id and time, source core", ev)
	}
	select {
	case a := <-st.acks:
		t.Fatalf("acknowledged (%+v) before the local handler returned", a)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if a := <-st.acks; a.Seq != 2 || a.Retry || a.Error != "" {
		t.Fatalf("ack %+v, want seq 2 without retry", a)
	}

	st.in <- &pb.PublishRequest{Event: &pb.Event{Id: "evt_2", Type: "task.bad", Data: []byte(`{}`)}}
	<-seen
	if a := <-st.acks; a.Seq != 3 || !a.Retry {
		t.Fatalf("ack %+v, want seq 3 with retry after a failed handler", a)
	}

	st.in <- &pb.PublishRequest{Event: &pb.Event{Type: "task.plain", Data: []byte(`{}`)}}
	if a := <-st.acks; a.Seq != 4 || a.Retry || a.Error != "" {
		t.Fatalf("ack %+v, want seq 4", a)
	}
	<-seen
	close(st.in)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// oneByOne runs h on each event of a batch in turn.
func oneByOne(h func(events.Event) error) events.BatchHandler {
	return func(evs []events.Event) []error {
		out := make([]error, len(evs))
		for i, ev := range evs {
			out[i] = h(ev)
		}
		return out
	}
}
