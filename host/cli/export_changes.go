package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/events"
)

// How `cairn export --watch` hears of changes (docs/decisions.md D41): the
// core area publishes an event on the host's bus for every task write
// (task.created, task.updated, task.claimed, …) and every thought record.
// A change counter on the bus counts them; the watch asks it, through the
// daemon's "task_changes" control request, to answer as soon as the count
// moves past what it last saw (a long poll), and then exports again. Only
// a daemon of an older cairn, without the request, is polled, every
// 500 ms.

// changePatterns are the events that change what a board shows.
var changePatterns = []string{"task.*", "thought.*"}

// changeCounter counts the events of changePatterns on one bus.
type changeCounter struct {
	mu    sync.Mutex
	seq   uint64
	moved chan struct{}
}

func newChangeCounter() *changeCounter { return &changeCounter{moved: make(chan struct{})} }

// follow counts bus's change events until the returned function is called.
func (c *changeCounter) follow(bus *events.Bus) (stop func()) {
	return bus.SubscribeSet("export-watch", changePatterns, func(events.Event) { c.bump() })
}

func (c *changeCounter) bump() {
	c.mu.Lock()
	c.seq++
	close(c.moved)
	c.moved = make(chan struct{})
	c.mu.Unlock()
}

// wait answers the count once it differs from after (a restarted daemon
// counts from 0 again, which differs too), or when within passed or ctx
// ended, with the count then.
func (c *changeCounter) wait(ctx context.Context, after uint64, within time.Duration) uint64 {
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		c.mu.Lock()
		seq, moved := c.seq, c.moved
		c.mu.Unlock()
		if seq != after {
			return seq
		}
		select {
		case <-moved:
		case <-t.C:
			return seq
		case <-ctx.Done():
			return seq
		}
	}
}

// changesVerb is the daemon control request of a watch.
const changesVerb = "task_changes"

// changesRequest asks for the count once it differs from After, waiting
// at most WaitMS.
type changesRequest struct {
	After  uint64 `json:"after"`
	WaitMS int    `json:"wait_ms"`
}

// changesReply is the count.
type changesReply struct {
	Seq uint64 `json:"seq"`
}

// maxChangesWait bounds one long poll in the daemon.
const maxChangesWait = 30 * time.Second

// daemonChanges is the daemon's change counter, set by its start hook.
var daemonChanges struct {
	mu sync.Mutex
	c  *changeCounter
}

func init() {
	controlVerbs[changesVerb] = changesControl
	daemonStartHooks = append(daemonStartHooks, func(_ context.Context, h *Host, _ daemon.Paths) func() {
		c := newChangeCounter()
		stop := c.follow(h.Bus)
		daemonChanges.mu.Lock()
		daemonChanges.c = c
		daemonChanges.mu.Unlock()
		return stop
	})
}

// changesControl answers a "task_changes" request in the daemon.
func changesControl(_ daemonHandler, data json.RawMessage) (json.RawMessage, error) {
	var req changesRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("task_changes request: %v", err)
	}
	daemonChanges.mu.Lock()
	c := daemonChanges.c
	daemonChanges.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("this daemon does not count task changes; see its log")
	}
	within := time.Duration(req.WaitMS) * time.Millisecond
	if within <= 0 || within > maxChangesWait {
		within = maxChangesWait
	}
	return json.Marshal(changesReply{Seq: c.wait(context.Background(), req.After, within)})
}
