package lane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// recorder is an event handler that records what it ran, in order, and
// fails, panics or blocks on request (by event type).
type recorder struct {
	mu      sync.Mutex
	ran     []string
	started chan context.Context
}

func (r *recorder) handle(ctx context.Context, ev *pb.Event) error {
	r.mu.Lock()
	r.ran = append(r.ran, ev.Id)
	r.mu.Unlock()
	switch ev.Type {
	case "boom":
		panic("kaboom")
	case "refused":
		return errs.New(409, errs.Conflict, "not now")
	case "plain":
		return errors.New("disk full")
	case "block":
		r.started <- ctx
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

func batchOf(types ...string) []*pb.Event {
	evs := make([]*pb.Event, len(types))
	for i, typ := range types {
		evs[i] = &pb.Event{Id: fmt.Sprintf("e%d", i), Type: typ, Data: []byte(`{}`)}
	}
	return evs
}

// wantOutcome checks one outcome: code "" means handled.
func wantOutcome(t *testing.T, i int, got error, code string, status int) {
	t.Helper()
	if code == "" {
		if got != nil {
			t.Fatalf("outcome %d = %v, want handled", i, got)
		}
		return
	}
	e, ok := errs.As(got)
	if !ok || e.Code != code || e.Status != status {
		t.Fatalf("outcome %d = %v, want %s %d", i, got, code, status)
	}
}

func TestBatchAnswersEachEventInOrder(t *testing.T) {
	r := &recorder{}
	c, _ := pairServer(t, &Server{Handle: echo, HandleEvent: r.handle, Limit: big}, big)
	evs := batchOf("task.created", "refused", "boom", "plain", "task.updated")
	outcomes, err := c.DeliverBatch(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		code   string
		status int
	}{{"", 0}, {errs.Conflict, 409}, {errs.Internal, 500}, {errs.Internal, 500}, {"", 0}}
	if len(outcomes) != len(want) {
		t.Fatalf("%d outcomes for %d events", len(outcomes), len(want))
	}
	for i, w := range want {
		wantOutcome(t, i, outcomes[i], w.code, w.status)
	}
	if got := strings.Join(r.seen(), ","); got != "e0,e1,e2,e3,e4" {
		t.Fatalf("handlers ran %s, want every event once in order", got)
	}
	// Calls and single events still work beside batches.
	if res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "x"}, nil, nil); err != nil || string(res.Output) != "x:" {
		t.Fatalf("call after a batch: %v, %v", res, err)
	}
	if err := c.Deliver(context.Background(), &pb.HandleEventRequest{Event: &pb.Event{Id: "one", Type: "task.created"}}); err != nil {
		t.Fatal(err)
	}
}

// TestBatchOverTheLimitIsSplitNotSent: host and plugin share a limit a
// single event fits but the whole batch does not; the host sends it in
// frames that fit (had it sent one, the plugin would refuse it whole), in
// order, and an event over the limit on its own is answered with the limit
// without being sent.
func TestBatchOverTheLimitIsSplitNotSent(t *testing.T) {
	const limit = 200
	r := &recorder{}
	c, _ := pairServer(t, &Server{Handle: echo, HandleEvent: r.handle, Limit: limit}, limit)
	evs := batchOf("a", "b", "c", "d", "e", "f", "g")
	for _, ev := range evs {
		ev.Data = []byte(`{"pad":"` + strings.Repeat("x", 40) + `"}`)
	}
	evs[4].Data = []byte(`{"pad":"` + strings.Repeat("x", 400) + `"}`)
	outcomes, err := c.DeliverBatch(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if i == 4 {
			e, ok := errs.As(outcomes[i])
			if !ok || e.Code != errs.LimitExceeded || e.Status != 413 || e.Details["constraint"] != fmt.Sprintf("size <= %d", limit) {
				t.Fatalf("outcome of the oversized event = %v, want ERR_LIMIT_EXCEEDED naming the limit", outcomes[i])
			}
			continue
		}
		wantOutcome(t, i, outcomes[i], "", 0)
	}
	if got := strings.Join(r.seen(), ","); got != "e0,e1,e2,e3,e5,e6" {
		t.Fatalf("handlers ran %s, want every fitting event once in order", got)
	}
}

// TestBatchOverThePluginsLimitIsRefusedWhole: a plugin with a smaller limit
// than the host reads past the frame and refuses the batch; no event runs
// and the lane carries on.
func TestBatchOverThePluginsLimitIsRefusedWhole(t *testing.T) {
	r := &recorder{}
	c, _ := pairServer(t, &Server{Handle: echo, HandleEvent: r.handle, Limit: 100}, big)
	evs := batchOf("a", "b", "c")
	for _, ev := range evs {
		ev.Data = []byte(`{"pad":"` + strings.Repeat("x", 40) + `"}`)
	}
	outcomes, err := c.DeliverBatch(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		wantOutcome(t, i, outcomes[i], errs.LimitExceeded, 413)
	}
	if ran := r.seen(); len(ran) != 0 {
		t.Fatalf("handlers ran %v for a refused batch", ran)
	}
	if res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "x"}, nil, nil); err != nil || string(res.Output) != "x:" {
		t.Fatalf("the lane did not survive: %v, %v", res, err)
	}
}

func TestBatchCancelReachesTheHandlers(t *testing.T) {
	r := &recorder{started: make(chan context.Context, 1)}
	c, _ := pairServer(t, &Server{Handle: echo, HandleEvent: r.handle, Limit: big}, big)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		outcomes []error
		err      error
	}
	done := make(chan result, 1)
	go func() {
		o, err := c.DeliverBatch(ctx, batchOf("a", "block", "c"))
		done <- result{o, err}
	}()
	hctx := <-r.started
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", res.err)
	}
	for i, o := range res.outcomes {
		if !errors.Is(o, context.Canceled) {
			t.Fatalf("outcome %d = %v, want cancelled", i, o)
		}
	}
	select {
	case <-hctx.Done(): // the cancel frame arrived
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the batch did not cancel its handler")
	}
	if outcomes, err := c.DeliverBatch(context.Background(), batchOf("after")); err != nil || outcomes[0] != nil {
		t.Fatalf("a batch after a cancel: %v, %v", outcomes, err)
	}
}

func TestBatchOnAClosedConnectionFailsWithErrClosed(t *testing.T) {
	r := &recorder{started: make(chan context.Context, 1)}
	c, conns := pairServer(t, &Server{Handle: echo, HandleEvent: r.handle, Limit: big}, big)
	done := make(chan error, 1)
	var outcomes []error
	go func() {
		var err error
		outcomes, err = c.DeliverBatch(context.Background(), batchOf("a", "block"))
		done <- err
	}()
	hctx := <-r.started
	(<-conns).Close() // the plugin's end goes away, as when its process dies
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) || !errors.Is(outcomes[0], ErrClosed) || !errors.Is(outcomes[1], ErrClosed) {
			t.Fatalf("err = %v, outcomes %v, want ErrClosed", err, outcomes)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending batch hung after the plugin went away")
	}
	select {
	case <-hctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin kept running a batch on a dead connection")
	}
	<-c.Done()
	if _, err := c.DeliverBatch(context.Background(), batchOf("later")); !errors.Is(err, ErrClosed) {
		t.Fatalf("a batch on a closed lane: %v, want ErrClosed", err)
	}
}
