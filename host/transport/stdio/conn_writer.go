package stdio

import (
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
)

// maxKeptLine bounds the line buffer a session's writer keeps between
// messages: a rare large answer does not pin its memory.
const maxKeptLine = 1 << 20

// sessionWriter writes the lines of one byte-stream session, one at a time.
// Every line goes after the notifications already queued. A tool call's
// answer is written by the goroutine that ran the call when nothing else
// was sent about it (no hand-off to the writer goroutine, which cost a
// thread wake-up per call); everything else goes through the writer
// goroutine, in order.
type sessionWriter struct {
	w      io.Writer
	notes  <-chan mcp.JSONRPCNotification
	tag    func(mcp.JSONRPCNotification) mcp.JSONRPCNotification
	onFail func()
	log    hclog.Logger

	mu     sync.Mutex
	buf    []byte // reused from line to line
	failed bool
}

// respond writes v after the queued notifications.
func (sw *sessionWriter) respond(v any) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.drainLocked()
	sw.writeLocked(v)
}

// flush writes the queued notifications.
func (sw *sessionWriter) flush() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.drainLocked()
}

// notify writes one notification.
func (sw *sessionWriter) notify(n mcp.JSONRPCNotification) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.writeLocked(sw.tag(n))
}

func (sw *sessionWriter) drainLocked() {
	for {
		select {
		case n := <-sw.notes:
			sw.writeLocked(sw.tag(n))
		default:
			return
		}
	}
}

func (sw *sessionWriter) writeLocked(v any) {
	if sw.failed {
		return
	}
	b, err := jsonrpc.AppendMessage(sw.buf[:0], v)
	if err != nil {
		sw.log.Warn("cannot encode a message for a session", "error", err)
		return
	}
	b = append(b, '\n')
	if _, err := sw.w.Write(b); err != nil {
		sw.failed = true
		sw.onFail()
	}
	if cap(b) <= maxKeptLine {
		sw.buf = b
	}
}
