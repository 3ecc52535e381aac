package lane

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/workers"
)

// Handler runs one tool call on the plugin side. It must return a result
// (a typed error inside it when the call failed). send carries the call's
// progress and log lines (a CallToolEvent's progress or log; a result
// handed to send is ignored) to the host ahead of the result; the handler
// must not call it once it has returned.
type Handler func(ctx context.Context, req *pb.CallToolRequest, send Sender) *pb.ToolResult

// Sender sends one event of a running call: a progress or log frame with
// the call's id. An event over the limit is dropped (the call goes on and
// its result still comes); so is one whose connection has ended.
type Sender func(ev *pb.CallToolEvent)

// Server is the plugin's end of a lane.
type Server struct {
	// Handle runs the calls.
	Handle Handler
	// HandleEvent runs a bus event's handlers; nil answers every event
	// with an error.
	HandleEvent func(ctx context.Context, ev *pb.Event) error
	// Limit bounds a frame's body in both directions.
	Limit int
	// OnPanic, when set, is told about a panic that escaped Handle (the
	// caller gets ERR_INTERNAL either way).
	OnPanic func(v any, stack []byte)
	// Inline, when set, says whether a call may run on the goroutine that
	// read it rather than on a worker. It is asked only when nothing else
	// runs on the lane. Handing a call to a worker readies a goroutine and
	// wakes a second thread, which costs a point read more than the read;
	// but the lane reads no further frame (not even that call's cancel)
	// until an inline call returns, so it is for calls that answer at once
	// and never wait on the host.
	Inline func(req *pb.CallToolRequest) bool
}

// ServeConn answers the calls arriving on conn until it ends or ctx does;
// then every call still running is cancelled. It closes conn.
func (s *Server) ServeConn(ctx context.Context, conn net.Conn) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer conn.Close()
	go func() {
		<-ctx.Done()
		_ = conn.Close() // unblocks the read below
	}()
	sc := &serverConn{s: s, conn: conn, w: frameWriter{conn: conn}, running: map[uint64]context.CancelFunc{}}
	work := workers.New(ctx.Done())
	fr := frameReader{r: conn, limit: s.Limit}
	for {
		h, body, tooLarge, err := fr.next()
		if err != nil {
			return err
		}
		switch h.kind {
		case kindCancel:
			sc.cancel(h.id)
		case kindEvent:
			if tooLarge {
				go sc.reply(h.id, failure(errs.Newf(413, errs.LimitExceeded, "the event is %d bytes; the limit between host and plugin is %d", h.size, s.Limit)))
				continue
			}
			req := &pb.HandleEventRequest{}
			deadline, err := decodeBody(body, req)
			if err != nil || req.Event == nil {
				go sc.reply(h.id, failure(errs.Newf(400, errs.InvalidInput, "the event does not decode (%v)", err)))
				continue
			}
			cctx, id, done, _ := sc.begin(ctx, h.id, deadline)
			work.Run(func() {
				defer done()
				sc.reply(id, eventResult(sc.event(cctx, req.Event)))
			})
		case kindEvents:
			if tooLarge {
				go sc.reply(h.id, batchFailure(errs.Newf(413, errs.LimitExceeded, "the event batch is %d bytes; the limit between host and plugin is %d", h.size, s.Limit).
					With("field", "events").With("constraint", fmt.Sprintf("size <= %d", s.Limit))))
				continue
			}
			req := &pb.HandleEventsRequest{}
			deadline, err := decodeBody(body, req)
			if err != nil {
				go sc.reply(h.id, batchFailure(errs.Newf(400, errs.InvalidInput, "the event batch does not decode: %v", err)))
				continue
			}
			cctx, id, done, _ := sc.begin(ctx, h.id, deadline)
			work.Run(func() {
				defer done()
				sc.reply(id, sc.events(cctx, req.Events))
			})
		case kindCall:
			if tooLarge {
				go sc.reply(h.id, failure(errs.Newf(413, errs.LimitExceeded, "the call is %d bytes; the limit between host and plugin is %d", h.size, s.Limit).
					With("field", "arguments").With("constraint", fmt.Sprintf("size <= %d", s.Limit))))
				continue
			}
			req := &pb.CallToolRequest{}
			deadline, err := decodeBody(body, req)
			if err != nil {
				go sc.reply(h.id, failure(errs.Newf(400, errs.InvalidInput, "the call does not decode: %v", err)))
				continue
			}
			cctx, id, done, alone := sc.begin(ctx, h.id, deadline)
			if alone && s.Inline != nil && s.Inline(req) {
				sc.reply(id, sc.handle(cctx, id, req))
				done()
				continue
			}
			work.Run(func() {
				defer done()
				sc.reply(id, sc.handle(cctx, id, req))
			})
		default:
			return errMalformed{fmt.Sprintf("frame kind %d is not sent to a plugin", h.kind)}
		}
	}
}

// decodeBody splits a call or event body into its deadline and message.
func decodeBody(body []byte, msg proto.Message) (time.Time, error) {
	if len(body) < deadlineSize {
		return time.Time{}, fmt.Errorf("body of %d bytes has no deadline", len(body))
	}
	var deadline time.Time
	if ns := int64(binary.BigEndian.Uint64(body)); ns != 0 {
		deadline = time.Unix(0, ns)
	}
	return deadline, proto.Unmarshal(body[deadlineSize:], msg)
}

type serverConn struct {
	s    *Server
	conn net.Conn
	w    frameWriter

	mu      sync.Mutex
	running map[uint64]context.CancelFunc
}

// begin gives call id its context and makes it cancellable by a cancel
// frame. It runs on the reader goroutine, before the call is handed to a
// worker, so a cancel read right after the call always finds it. done
// releases the call; alone says nothing else was running on the lane.
func (sc *serverConn) begin(ctx context.Context, id uint64, deadline time.Time) (_ context.Context, _ uint64, done func(), alone bool) {
	var cancel context.CancelFunc
	if deadline.IsZero() {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithDeadline(ctx, deadline)
	}
	sc.mu.Lock()
	alone = len(sc.running) == 0
	sc.running[id] = cancel
	sc.mu.Unlock()
	return ctx, id, func() {
		sc.mu.Lock()
		delete(sc.running, id)
		sc.mu.Unlock()
		cancel()
	}, alone
}

// event runs the event handlers; a failure or panic comes back as a typed
// error, nil when they all succeeded.
func (sc *serverConn) event(ctx context.Context, ev *pb.Event) (fail *errs.Error) {
	defer func() {
		if r := recover(); r != nil {
			if sc.s.OnPanic != nil {
				sc.s.OnPanic(r, debug.Stack())
			}
			fail = errs.Newf(500, errs.Internal, "the handler of %s failed unexpectedly; the plugin logged the details", ev.Type)
		}
	}()
	if sc.s.HandleEvent == nil {
		return errs.New(501, errs.Internal, "this plugin takes no events on the lane")
	}
	if err := sc.s.HandleEvent(ctx, ev); err != nil {
		e := errs.From(err)
		if e.Status == 0 {
			e.Status = 500
		}
		return e
	}
	return nil
}

// events runs a batch's events one after another, in order; each event's
// failure (or panic) is its own outcome and the next event runs anyway.
func (sc *serverConn) events(ctx context.Context, evs []*pb.Event) *pb.HandleEventsResponse {
	outcomes := make([]*errs.Error, len(evs))
	for i, ev := range evs {
		if ev == nil {
			outcomes[i] = errs.New(400, errs.InvalidInput, "the batch holds an empty event")
		} else {
			outcomes[i] = sc.event(ctx, ev)
		}
	}
	return convert.EventOutcomesToProto(outcomes)
}

// eventResult is a single event's answer: an error only when it failed.
func eventResult(fail *errs.Error) *pb.ToolResult {
	if fail != nil {
		return failure(fail)
	}
	return convert.ResultToProto(seam.Result{Status: 200})
}

// handle runs the handler; a panic becomes ERR_INTERNAL, never a dead
// plugin or a call without an answer.
func (sc *serverConn) handle(ctx context.Context, id uint64, req *pb.CallToolRequest) (res *pb.ToolResult) {
	defer func() {
		if r := recover(); r != nil {
			if sc.s.OnPanic != nil {
				sc.s.OnPanic(r, debug.Stack())
			}
			res = failure(errs.Newf(500, errs.Internal, "tool %s failed unexpectedly; the plugin logged the details", req.Tool))
		}
	}()
	return sc.s.Handle(ctx, req, func(ev *pb.CallToolEvent) { sc.sendEvent(id, ev) })
}

// sendEvent writes a call's progress or log frame. A frame over the limit
// is not sent: the host would only skip it, and the call goes on.
func (sc *serverConn) sendEvent(id uint64, ev *pb.CallToolEvent) {
	var kind byte
	var msg proto.Message
	switch e := ev.GetEvent().(type) {
	case *pb.CallToolEvent_Progress:
		if e.Progress == nil {
			return
		}
		kind, msg = kindProgress, e.Progress
	case *pb.CallToolEvent_Log:
		if e.Log == nil {
			return
		}
		kind, msg = kindLog, e.Log
	default:
		return // the result travels as the call's result frame
	}
	size := proto.Size(msg)
	if size > sc.s.Limit {
		return
	}
	// proto.Size cached the sizes the encoder needs.
	frame, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, headerSize, headerSize+size), msg)
	if err != nil {
		return
	}
	putHeader(frame, header{size: uint32(len(frame) - headerSize), kind: kind, id: id})
	_ = sc.w.write(frame)
}

func (sc *serverConn) cancel(id uint64) {
	sc.mu.Lock()
	cancel := sc.running[id]
	sc.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// reply writes a result frame (a ToolResult, or a HandleEventsResponse for
// a batch); a result over the limit is replaced by a typed error saying so.
func (sc *serverConn) reply(id uint64, res proto.Message) {
	fail := func(e *errs.Error) proto.Message { return failure(e) }
	if _, ok := res.(*pb.HandleEventsResponse); ok {
		fail = func(e *errs.Error) proto.Message { return batchFailure(e) }
	}
	// proto.Size cached the sizes the encoder needs.
	frame, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, headerSize, headerSize+proto.Size(res)), res)
	if err != nil {
		frame, _ = proto.MarshalOptions{}.MarshalAppend(make([]byte, headerSize), fail(errs.Newf(500, errs.Internal, "the result does not encode: %v", err)))
	}
	if size := len(frame) - headerSize; size > sc.s.Limit {
		frame, _ = proto.MarshalOptions{}.MarshalAppend(make([]byte, headerSize), fail(errs.Newf(413, errs.LimitExceeded, "the result is %d bytes; the limit between plugin and host is %d", size, sc.s.Limit).
			With("constraint", fmt.Sprintf("size <= %d", sc.s.Limit))))
	}
	putHeader(frame, header{size: uint32(len(frame) - headerSize), kind: kindResult, id: id})
	// A failed write closes the connection: the host fails its calls.
	_ = sc.w.write(frame)
}

// failure is a result carrying a typed error.
func failure(e *errs.Error) *pb.ToolResult {
	return convert.ResultToProto(seam.Result{Err: e, Status: e.Status})
}

// batchFailure answers a batch the plugin refused as a whole: no event ran.
func batchFailure(e *errs.Error) *pb.HandleEventsResponse {
	return convert.BatchRefusedToProto(e)
}
