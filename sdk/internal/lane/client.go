package lane

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// ErrClosed is returned for calls on a lane whose connection has ended (the
// plugin process died, or Close ran). A call in flight when it ended may or
// may not have run.
var ErrClosed = errors.New("lane: connection closed")

// Client is the host's end of a lane. Calls may run concurrently.
type Client struct {
	conn  net.Conn
	limit int

	w frameWriter

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]waiter
	closed  bool
	done    chan struct{}
}

// waiter is a frame waiting for its result; batch says the result is a
// HandleEventsResponse rather than a ToolResult. events, set for a call
// that takes progress or log lines, queues them for the caller.
type waiter struct {
	ch     chan answer
	batch  bool
	events *eventQueue
}

type answer struct {
	res   *pb.ToolResult
	batch *pb.HandleEventsResponse
	err   error
}

// Dial connects to a plugin's lane socket. limit bounds a frame's body in
// both directions (the host's message limit).
func Dial(ctx context.Context, path string, limit int) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("lane: dial %s: %w", path, err)
	}
	return NewClient(conn, limit), nil
}

// NewClient runs a lane over an established connection and starts its
// reader.
func NewClient(conn net.Conn, limit int) *Client {
	c := &Client{conn: conn, limit: limit, w: frameWriter{conn: conn}, pending: map[uint64]waiter{}, done: make(chan struct{})}
	go c.read()
	return c
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the connection; calls in flight fail with ErrClosed.
func (c *Client) Close() error {
	err := c.conn.Close()
	c.shut()
	return err
}

// Call sends one tool call and waits for its result. The plugin's progress
// and log lines for the call (sent when the request's wants_progress and
// log_level ask for them) go to onProgress and onLog, in the order the
// plugin sent them and all before Call returns the result; either may be
// nil, and both run on the calling goroutine. When ctx ends first the
// plugin is told to cancel the call and ctx's error is returned. A request
// over the limit fails with ERR_LIMIT_EXCEEDED before anything is sent.
func (c *Client) Call(ctx context.Context, req *pb.CallToolRequest, onProgress func(*pb.Progress), onLog func(*pb.LogMessage)) (*pb.ToolResult, error) {
	frame, err := c.encode(ctx, req, "the call to "+req.Tool, "arguments")
	if err != nil {
		return nil, err
	}
	w := waiter{ch: make(chan answer, 1)}
	if onProgress != nil || onLog != nil {
		w.events = &eventQueue{ready: make(chan struct{}, 1), onProgress: onProgress, onLog: onLog}
	}
	a := c.send(ctx, kindCall, frame, w)
	return a.res, a.err
}

// Deliver hands one bus event to the plugin and waits until its handlers
// ran; their failure comes back as a typed error.
func (c *Client) Deliver(ctx context.Context, ev *pb.HandleEventRequest) error {
	a := c.roundTrip(ctx, kindEvent, ev, "the event", "event")
	if a.err != nil {
		return a.err
	}
	return errorFromProto(a.res.GetError())
}

// errorFromProto is a protocol error as a typed error; nil for none.
func errorFromProto(e *pb.ToolError) error {
	if e == nil {
		return nil
	}
	return errs.New(int(e.Status), e.Code, e.Message)
}

// roundTrip sends a frame carrying ctx's deadline and msg and waits for
// the result frame with the same id.
func (c *Client) roundTrip(ctx context.Context, kind byte, msg proto.Message, what, field string) answer {
	frame, err := c.encode(ctx, msg, what, field)
	if err != nil {
		return answer{err: err}
	}
	return c.send(ctx, kind, frame, waiter{ch: make(chan answer, 1), batch: kind == kindEvents})
}

// encode lays out a frame: header room, ctx's deadline, msg. A body over
// the limit is a typed error naming it; nothing is sent.
func (c *Client) encode(ctx context.Context, msg proto.Message, what, field string) ([]byte, error) {
	frame := make([]byte, headerSize+deadlineSize, headerSize+deadlineSize+proto.Size(msg))
	if dl, ok := ctx.Deadline(); ok {
		binary.BigEndian.PutUint64(frame[headerSize:], uint64(dl.UnixNano()))
	}
	// proto.Size above cached the sizes: the encoder does not walk the
	// message for them again.
	frame, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(frame, msg)
	if err != nil {
		return nil, fmt.Errorf("lane: encode %s: %w", what, err)
	}
	if size := len(frame) - headerSize; size > c.limit {
		return nil, errs.Newf(413, errs.LimitExceeded, "%s is %d bytes; the limit between host and plugin is %d", what, size, c.limit).
			With("field", field).With("constraint", fmt.Sprintf("size <= %d", c.limit))
	}
	return frame, nil
}

// send writes an encoded frame under a new id and waits for its result,
// handing the call's events, if w takes any, to their callbacks meanwhile.
func (c *Client) send(ctx context.Context, kind byte, frame []byte, w waiter) answer {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return answer{err: ErrClosed}
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = w
	c.mu.Unlock()
	putHeader(frame, header{size: uint32(len(frame) - headerSize), kind: kind, id: id})
	if err := c.write(frame); err != nil {
		c.forget(id)
		return answer{err: err}
	}
	var ready <-chan struct{}
	if w.events != nil {
		ready = w.events.ready
	}
	for {
		select {
		case a := <-w.ch:
			// The reader queued the call's events before its result.
			w.events.deliver()
			return a
		case <-ready:
			w.events.deliver()
		case <-ctx.Done():
			if c.forget(id) {
				c.cancel(id)
				return answer{err: ctx.Err()}
			}
			a := <-w.ch // answered (or failed) while we gave up: take it
			w.events.deliver()
			return a
		}
	}
}

// forget drops a pending call; false when the reader already answered it.
func (c *Client) forget(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return false
	}
	delete(c.pending, id)
	return true
}

func (c *Client) cancel(id uint64) {
	var frame [headerSize]byte
	putHeader(frame[:], header{kind: kindCancel, id: id})
	_ = c.write(frame[:]) // a dead connection cancels everything anyway
}

func (c *Client) write(frame []byte) error { return c.w.write(frame) }

// read is the connection's only reader: it hands each result to its caller.
func (c *Client) read() {
	defer c.shut()
	fr := frameReader{r: c.conn, limit: c.limit}
	for {
		h, body, tooLarge, err := fr.next()
		if err != nil {
			return
		}
		switch h.kind {
		case kindResult:
		case kindProgress, kindLog:
			c.queueEvent(h, body, tooLarge)
			continue
		default:
			_ = c.conn.Close() // the plugin does not speak the lane
			return
		}
		c.mu.Lock()
		w, ok := c.pending[h.id]
		delete(c.pending, h.id)
		c.mu.Unlock()
		if ok {
			w.ch <- c.decodeResult(w.batch, h, body, tooLarge)
		}
	}
}

// queueEvent hands a progress or log frame to the call it belongs to. A
// frame for a call that is not waiting (finished, cancelled, or one that
// asked for no events), over the limit, or that does not decode is
// dropped: the call goes on and its result still comes.
func (c *Client) queueEvent(h header, body []byte, tooLarge bool) {
	if tooLarge {
		return
	}
	c.mu.Lock()
	w, ok := c.pending[h.id]
	c.mu.Unlock()
	if !ok || w.events == nil {
		return
	}
	ev, err := decodeEvent(h.kind, body)
	if err != nil {
		return
	}
	w.events.push(ev)
}

// callEvent is a call's progress report or log line, as its frame
// carried it: one of the two is set.
type callEvent struct {
	progress *pb.Progress
	log      *pb.LogMessage
}

// decodeEvent decodes a progress or log frame's body as the event it
// carries.
func decodeEvent(kind byte, body []byte) (callEvent, error) {
	switch kind {
	case kindProgress:
		m := &pb.Progress{}
		if err := proto.Unmarshal(body, m); err != nil {
			return callEvent{}, err
		}
		return callEvent{progress: m}, nil
	case kindLog:
		m := &pb.LogMessage{}
		if err := proto.Unmarshal(body, m); err != nil {
			return callEvent{}, err
		}
		return callEvent{log: m}, nil
	}
	return callEvent{}, fmt.Errorf("lane: frame kind %d carries no call event", kind)
}

// decodeResult turns a result frame into its waiter's answer.
func (c *Client) decodeResult(batch bool, h header, body []byte, tooLarge bool) answer {
	if tooLarge {
		return answer{err: errs.Newf(502, errs.LimitExceeded, "the plugin's result is %d bytes; the limit between host and plugin is %d", h.size, c.limit).
			With("constraint", fmt.Sprintf("size <= %d", c.limit))}
	}
	var a answer
	var msg proto.Message
	if batch {
		a.batch = &pb.HandleEventsResponse{}
		msg = a.batch
	} else {
		a.res = &pb.ToolResult{}
		msg = a.res
	}
	if err := proto.Unmarshal(body, msg); err != nil {
		return answer{err: errs.Newf(502, errs.PluginUnavailable, "the plugin sent a result that does not decode: %v", err)}
	}
	return a
}

// shut marks the lane closed and fails every pending call.
func (c *Client) shut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	_ = c.conn.Close()
	for id, w := range c.pending {
		w.ch <- answer{err: ErrClosed}
		delete(c.pending, id)
	}
	close(c.done)
}

// maxQueuedEvents bounds the events queued for one call that its caller
// has not taken yet: a plugin that reports faster than the client takes
// notifications loses the excess (progress and log lines are advisory),
// never the host's memory.
const maxQueuedEvents = 1024

// eventQueue holds a call's progress and log lines between the reader,
// which must not wait on a caller, and the caller, which runs the
// callbacks.
type eventQueue struct {
	mu     sync.Mutex
	events []callEvent
	// ready holds a token while events are queued.
	ready      chan struct{}
	onProgress func(*pb.Progress)
	onLog      func(*pb.LogMessage)
}

func (q *eventQueue) push(ev callEvent) {
	q.mu.Lock()
	if len(q.events) >= maxQueuedEvents {
		q.mu.Unlock()
		return
	}
	q.events = append(q.events, ev)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// deliver runs the callbacks for every queued event, in order. A nil
// queue has none.
func (q *eventQueue) deliver() {
	if q == nil {
		return
	}
	q.mu.Lock()
	evs := q.events
	q.events = nil
	q.mu.Unlock()
	for _, ev := range evs {
		switch {
		case ev.progress != nil:
			if q.onProgress != nil {
				q.onProgress(ev.progress)
			}
		case ev.log != nil:
			if q.onLog != nil {
				q.onLog(ev.log)
			}
		}
	}
}
