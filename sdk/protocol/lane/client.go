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
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
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
	pending map[uint64]chan answer
	closed  bool
	done    chan struct{}
}

type answer struct {
	res *pb.ToolResult
	err error
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
	c := &Client{conn: conn, limit: limit, w: frameWriter{conn: conn}, pending: map[uint64]chan answer{}, done: make(chan struct{})}
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

// Call sends one tool call and waits for its result. When ctx ends first the
// plugin is told to cancel the call and ctx's error is returned. A request
// over the limit fails with ERR_LIMIT_EXCEEDED before anything is sent.
func (c *Client) Call(ctx context.Context, req *pb.CallToolRequest) (*pb.ToolResult, error) {
	return c.roundTrip(ctx, kindCall, req, "the call to "+req.Tool, "arguments")
}

// Deliver hands one bus event to the plugin and waits until its handlers
// ran; their failure comes back as a typed error.
func (c *Client) Deliver(ctx context.Context, ev *pb.HandleEventRequest) error {
	res, err := c.roundTrip(ctx, kindEvent, ev, "the event", "event")
	if err != nil {
		return err
	}
	if e := res.GetError(); e != nil {
		return errs.New(int(e.Status), e.Code, e.Message)
	}
	return nil
}

// roundTrip sends a frame carrying ctx's deadline and msg and waits for
// the result frame with the same id.
func (c *Client) roundTrip(ctx context.Context, kind byte, msg proto.Message, what, field string) (*pb.ToolResult, error) {
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
	size := len(frame) - headerSize
	if size > c.limit {
		return nil, errs.Newf(413, errs.LimitExceeded, "%s is %d bytes; the limit between host and plugin is %d", what, size, c.limit).
			With("field", field).With("constraint", fmt.Sprintf("size <= %d", c.limit))
	}
	ch := make(chan answer, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	putHeader(frame, header{size: uint32(size), kind: kind, id: id})
	if err := c.write(frame); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
		if c.forget(id) {
			c.cancel(id)
			return nil, ctx.Err()
		}
		a := <-ch // answered (or failed) while we gave up: take it
		return a.res, a.err
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
		if h.kind != kindResult {
			_ = c.conn.Close() // the plugin does not speak the lane
			return
		}
		a := answer{}
		switch {
		case tooLarge:
			a.err = errs.Newf(502, errs.LimitExceeded, "the plugin's result is %d bytes; the limit between host and plugin is %d", h.size, c.limit).
				With("constraint", fmt.Sprintf("size <= %d", c.limit))
		default:
			res := &pb.ToolResult{}
			if err := proto.Unmarshal(body, res); err != nil {
				a.err = errs.Newf(502, errs.PluginUnavailable, "the plugin sent a result that does not decode: %v", err)
			} else {
				a.res = res
			}
		}
		c.mu.Lock()
		ch, ok := c.pending[h.id]
		delete(c.pending, h.id)
		c.mu.Unlock()
		if ok {
			ch <- a
		}
	}
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
	for id, ch := range c.pending {
		ch <- answer{err: ErrClosed}
		delete(c.pending, id)
	}
	close(c.done)
}
