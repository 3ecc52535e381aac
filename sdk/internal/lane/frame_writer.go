package lane

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// writeTimeout bounds one write: a peer that stopped reading must not hold
// every writer of the connection.
const writeTimeout = 30 * time.Second

// maxKeptWrite bounds the batch buffer a frame writer keeps between
// batches: a rare burst of large frames does not pin its memory.
const maxKeptWrite = 1 << 20

// frameWriter writes whole frames to one connection for any number of
// goroutines. While one write is in the kernel, frames from other
// goroutines are queued, and the goroutine that wrote goes on to write the
// whole queue in one write. Under load (several calls answered by one
// group commit, several callers at once) frames share write system calls,
// and the peer wakes once for them; a lone frame is written at once, as
// before.
//
// A frame handed to write is on the connection or queued for it when write
// returns; a failed write closes the connection, so whoever waits on the
// frame's answer learns of it from the reader.
type frameWriter struct {
	conn net.Conn

	mu sync.Mutex
	// busy is set while a goroutine writes; it drains queued before it
	// clears busy.
	busy   bool
	queued []byte
	// spare is the buffer the next batch is queued into.
	spare []byte
	err   error
}

// maxRounds bounds how many batches of other goroutines' frames one
// writer writes before it hands the rest to a goroutine of its own: a
// caller must not be kept from its answer by a steady stream of others.
const maxRounds = 4

// write sends frame, or queues it for the goroutine writing now. frame may
// be reused once write returns.
func (w *frameWriter) write(frame []byte) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if w.busy {
		w.queued = append(w.queued, frame...)
		w.mu.Unlock()
		return nil
	}
	w.busy = true
	w.mu.Unlock()
	return w.flush(frame, false, maxRounds)
}

// flush writes buf (owned: a queue buffer it may keep), then whatever was
// queued meanwhile, until the queue is empty; after rounds batches it goes
// on in a goroutine of its own. busy is set throughout.
func (w *frameWriter) flush(buf []byte, own bool, rounds int) error {
	for {
		_ = w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.conn.Write(buf)
		w.mu.Lock()
		if err != nil {
			// A partial frame leaves the stream out of step: end it.
			w.err = fmt.Errorf("%w: %v", ErrClosed, err)
			w.busy, w.queued, w.spare = false, nil, nil
			w.mu.Unlock()
			_ = w.conn.Close()
			return w.err
		}
		if own && cap(buf) <= maxKeptWrite {
			w.spare = buf[:0]
		}
		if len(w.queued) == 0 {
			w.busy = false
			w.mu.Unlock()
			return nil
		}
		buf, own = w.queued, true
		w.queued, w.spare = w.spare, nil
		w.mu.Unlock()
		if rounds--; rounds == 0 {
			go func() { _ = w.flush(buf, true, maxRounds) }()
			return nil
		}
	}
}
