package sdk

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// retryingHost acknowledges each event, asking for a retry of those whose
// type is "demo.retry"; it records the ids and times it received.
type retryingHost struct {
	pb.UnimplementedHostServer
	got chan *pb.Event
}

func (h *retryingHost) PublishEvents(stream pb.Host_PublishEventsServer) error {
	var seq uint64
	for {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		seq++
		h.got <- req.Event
		ack := &pb.PublishAck{Seq: seq}
		if req.Event.Type == "demo.retry" {
			ack.Retry, ack.Error = true, "subscriber admin: store down"
		}
		if err := stream.Send(ack); err != nil {
			return err
		}
	}
}

// TestPublishDurableReportsEachOutcome: the host gets the event's own id
// and time, and done hears nil for a handled event and an error for one
// the host asks to retry.
func TestPublishDurableReportsEachOutcome(t *testing.T) {
	p := New("pubtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := &retryingHost{got: make(chan *pb.Event, 4)}
	h := &grpcHost{client: dialHost(t, host)}
	h.events = newPublisher(ctx, h.client, hclog.NewNullLogger())
	p.setHost(h)

	if err := p.PublishDurable(Event{Type: "demo.ok"}, func(error) {}); err == nil {
		t.Fatal("an event without an id was accepted")
	}
	outcomes := make(chan error, 2)
	for _, typ := range []string{"demo.ok", "demo.retry"} {
		ev := Event{ID: "evt_" + typ, Type: typ, Time: "2026-01-01T00:00:00.000Z", Data: []byte(`{}`)}
		if err := p.PublishDurable(ev, func(err error) { outcomes <- err }); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"evt_demo.ok", "evt_demo.retry"} {
		got := <-host.got
		if got.Id != want || got.Time != "2026-01-01T00:00:00.000Z" {
			t.Fatalf("host got id %q time %q, want %q and the event's time", got.Id, got.Time, want)
		}
	}
	timeout := time.After(10 * time.Second)
	for i, wantErr := range []bool{false, true} {
		select {
		case err := <-outcomes:
			if (err != nil) != wantErr {
				t.Fatalf("outcome %d = %v, want error %v", i, err, wantErr)
			}
		case <-timeout:
			t.Fatal("no outcome")
		}
	}
}
