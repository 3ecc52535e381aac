package sdk

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
)

// TestLaneEventBatchAnswersPerEvent: a batch on the plugin's real lane
// server runs its OnEvent handlers for each event in order; the event whose
// handler fails and the one whose handler panics fail alone, and the
// events after them still run.
func TestLaneEventBatchAnswersPerEvent(t *testing.T) {
	p := New("batchtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	var mu sync.Mutex
	var ran []string
	p.OnEvent("task.*", func(_ context.Context, ev Event) error {
		mu.Lock()
		ran = append(ran, ev.ID)
		mu.Unlock()
		switch ev.Type {
		case "task.refused":
			return errs.New(409, errs.Conflict, "not now")
		case "task.broken":
			panic("kaboom")
		}
		return nil
	})
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		conn, err := ln.Accept()
		ln.Close()
		if err == nil {
			_ = (&server{p: p}).laneServer().ServeConn(ctx, conn)
		}
	}()
	c, err := lane.Dial(context.Background(), path, protocol.MaxMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); cancel(); <-served }()

	evs := []*pb.Event{
		{Id: "1", Type: "task.created", Data: []byte(`{}`)},
		{Id: "2", Type: "task.refused", Data: []byte(`{}`)},
		{Id: "3", Type: "task.broken", Data: []byte(`{}`)},
		{Id: "4", Type: "task.updated", Data: []byte(`{}`)},
	}
	outcomes, err := c.DeliverBatch(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	if outcomes[0] != nil || outcomes[3] != nil {
		t.Fatalf("outcomes = %v, want events 1 and 4 handled", outcomes)
	}
	if e, ok := errs.As(outcomes[1]); !ok || e.Code != errs.Conflict || e.Status != 409 {
		t.Fatalf("outcome of the refused event = %v, want the handler's ERR_CONFLICT", outcomes[1])
	}
	if e, ok := errs.As(outcomes[2]); !ok || e.Code != errs.Internal || !strings.Contains(e.Message, "task.broken") {
		t.Fatalf("outcome of the panicking event = %v, want ERR_INTERNAL naming it", outcomes[2])
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(ran, ","); got != "1,2,3,4" {
		t.Fatalf("handlers ran for %s, want 1,2,3,4 in order", got)
	}
}

func TestLaneEventBatchesCanBeTurnedOff(t *testing.T) {
	t.Setenv("CAIRN_LANE_EVENT_BATCHES", "")
	if !laneEventBatches() {
		t.Fatal("batches are off by default")
	}
	t.Setenv("CAIRN_LANE_EVENT_BATCHES", "off")
	if laneEventBatches() {
		t.Fatal("CAIRN_LANE_EVENT_BATCHES=off did not turn batches off")
	}
}
