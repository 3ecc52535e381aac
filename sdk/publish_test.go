package sdk

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// recordingHost is a host that records the events it receives. breakAfter,
// when positive, ends each PublishEvents stream after that many events
// (acknowledged), so the publisher must reopen it; streams counts them.
// unaryOnly makes it a host from before PublishEvents.
type recordingHost struct {
	pb.UnimplementedHostServer
	breakAfter int
	unaryOnly  bool

	mu      sync.Mutex
	got     []string
	streams int
	unary   int
}

func (h *recordingHost) Publish(_ context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unary++
	h.got = append(h.got, string(req.Event.Data))
	return &pb.PublishResponse{}, nil
}

func (h *recordingHost) PublishEvents(stream pb.Host_PublishEventsServer) error {
	if h.unaryOnly {
		return h.UnimplementedHostServer.PublishEvents(stream)
	}
	h.mu.Lock()
	h.streams++
	h.mu.Unlock()
	var seq uint64
	for {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		seq++
		h.mu.Lock()
		h.got = append(h.got, string(req.Event.Data))
		h.mu.Unlock()
		if err := stream.Send(&pb.PublishAck{Seq: seq}); err != nil {
			return err
		}
		if h.breakAfter > 0 && int(seq) == h.breakAfter {
			return fmt.Errorf("stream broken on purpose")
		}
	}
}

func (h *recordingHost) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// dialHost serves h in memory and returns a client to it.
func dialHost(t *testing.T, h pb.HostServer) pb.HostClient {
	t.Helper()
	return pb.NewHostClient(dialBufconn(t, func(srv *grpc.Server) { pb.RegisterHostServer(srv, h) }))
}

// TestPublishDeliversInOrderWithoutWaiting: Publish returns at once, and
// the host receives every event exactly once, in publication order — over
// one stream, over a stream that keeps breaking (unacknowledged events are
// sent again), and to a host that only has the unary Publish.
func TestPublishDeliversInOrderWithoutWaiting(t *testing.T) {
	cases := []struct {
		name        string
		host        *recordingHost
		wantStreams func(n int) bool
		wantUnary   int
	}{
		{"one stream", &recordingHost{}, func(n int) bool { return n == 1 }, 0},
		{"stream breaks every 97 events", &recordingHost{breakAfter: 97}, func(n int) bool { return n >= 10 }, 0},
		{"host without PublishEvents", &recordingHost{unaryOnly: true}, func(int) bool { return true }, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New("pubtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &grpcHost{client: dialHost(t, tc.host)}
			h.events = newPublisher(ctx, h.client, hclog.NewNullLogger())
			p.setHost(h)

			const n = 1000
			want := make([]string, n)
			for i := 0; i < n; i++ {
				if err := p.Publish(ctx, "demo.n", i); err != nil {
					t.Fatal(err)
				}
				want[i] = fmt.Sprint(i)
			}
			fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
			defer fcancel()
			if err := p.FlushEvents(fctx); err != nil {
				t.Fatalf("flush: %v", err)
			}
			got := tc.host.events()
			if len(got) != n {
				t.Fatalf("host got %d events, want %d", len(got), n)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("event %d is %s, want %s (order or duplicate)", i, got[i], want[i])
				}
			}
			tc.host.mu.Lock()
			streams, unary := tc.host.streams, tc.host.unary
			tc.host.mu.Unlock()
			if !tc.wantStreams(streams) || unary != tc.wantUnary {
				t.Fatalf("streams=%d unary=%d", streams, unary)
			}
		})
	}
}

// TestPublishRefusesAnEmptyType: the one check that stays synchronous.
func TestPublishRefusesAnEmptyType(t *testing.T) {
	p := New("pubtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	h := &grpcHost{client: dialHost(t, &recordingHost{})}
	h.events = newPublisher(t.Context(), h.client, hclog.NewNullLogger())
	p.setHost(h)
	if err := p.Publish(t.Context(), " ", 1); err == nil {
		t.Fatal("an empty event type was accepted")
	}
}

// TestFlushWaitsForTheHost: FlushEvents returns only once the host has
// acknowledged, and gives up with the context when it never does.
func TestFlushWaitsForTheHost(t *testing.T) {
	stuck := &stuckHost{release: make(chan struct{})}
	p := New("pubtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	h := &grpcHost{client: dialHost(t, stuck)}
	h.events = newPublisher(t.Context(), h.client, hclog.NewNullLogger())
	p.setHost(h)
	if err := p.Publish(t.Context(), "demo.x", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := p.FlushEvents(ctx); err == nil {
		t.Fatal("flush returned before the host acknowledged")
	}
	close(stuck.release)
	ctx2, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	if err := p.FlushEvents(ctx2); err != nil {
		t.Fatalf("flush after the host acknowledged: %v", err)
	}
}

// stuckHost acknowledges nothing until release is closed.
type stuckHost struct {
	pb.UnimplementedHostServer
	release chan struct{}
}

func (h *stuckHost) PublishEvents(stream pb.Host_PublishEventsServer) error {
	var seq uint64
	for {
		if _, err := stream.Recv(); err != nil {
			return err
		}
		seq++
		select {
		case <-h.release:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
		if err := stream.Send(&pb.PublishAck{Seq: seq}); err != nil {
			return err
		}
	}
}
