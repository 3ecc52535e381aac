package lane

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// gateConn records every Write; while held, a Write waits for release.
type gateConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
	hold   chan struct{}
	fail   error
	closed bool
}

func (c *gateConn) Write(b []byte) (int, error) {
	if c.hold != nil {
		<-c.hold
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return 0, c.fail
	}
	c.writes = append(c.writes, append([]byte(nil), b...))
	return len(b), nil
}
func (c *gateConn) SetWriteDeadline(time.Time) error { return nil }
func (c *gateConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func testFrame(i int) []byte {
	body := []byte(fmt.Sprintf("frame %d", i))
	f := make([]byte, headerSize, headerSize+len(body))
	putHeader(f, header{size: uint32(len(body)), kind: kindResult, id: uint64(i)})
	return append(f, body...)
}

// Frames queued while a write is in the kernel go out together in the
// next write, whole and in the order they were queued.
func TestFrameWriterBatchesFramesQueuedDuringAWrite(t *testing.T) {
	c := &gateConn{hold: make(chan struct{})}
	w := &frameWriter{conn: c}
	first := make(chan error, 1)
	go func() { first <- w.write(testFrame(0)) }()
	// Wait until the first write holds the connection.
	for {
		w.mu.Lock()
		busy := w.busy
		w.mu.Unlock()
		if busy {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i := 1; i <= 5; i++ {
		if err := w.write(testFrame(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(c.hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if len(c.writes) != 2 {
		t.Fatalf("%d writes, want 2 (the first frame, then the five queued together)", len(c.writes))
	}
	var want []byte
	for i := 1; i <= 5; i++ {
		want = append(want, testFrame(i)...)
	}
	if !bytes.Equal(c.writes[1], want) {
		t.Fatalf("second write = %q, want the queued frames in order", c.writes[1])
	}
}

// Under many concurrent writers every frame arrives once, whole, over a
// real socket.
func TestFrameWriterConcurrentFramesArriveWhole(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w := &frameWriter{conn: a}
	const writers, each = 8, 200
	got := map[uint64]bool{}
	done := make(chan error, 1)
	go func() {
		fr := frameReader{r: b, limit: 1 << 20}
		for len(got) < writers*each {
			h, body, _, err := fr.next()
			if err != nil {
				done <- err
				return
			}
			if string(body) != fmt.Sprintf("frame %d", h.id) || got[h.id] {
				done <- fmt.Errorf("frame %d arrived as %q (seen before: %v)", h.id, body, got[h.id])
				return
			}
			got[h.id] = true
		}
		done <- nil
	}()
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := w.write(testFrame(g*each + i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("only %d of %d frames arrived", len(got), writers*each)
	}
}

// A failed write closes the connection and fails every later write.
func TestFrameWriterFailureClosesTheConnection(t *testing.T) {
	c := &gateConn{fail: errors.New("broken pipe")}
	w := &frameWriter{conn: c}
	if err := w.write(testFrame(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("write on a failing connection: %v, want ErrClosed", err)
	}
	if !c.closed {
		t.Fatal("the connection was left open after a failed write")
	}
	if err := w.write(testFrame(2)); !errors.Is(err, ErrClosed) {
		t.Fatalf("a later write: %v, want ErrClosed", err)
	}
}
