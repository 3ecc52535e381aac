// Package frame is the framing of the floor's plugin pipe: each message is
// a 4-byte big-endian length and that many bytes, the least a pipe between
// two processes needs to tell one message from the next.
package frame

import (
	"encoding/binary"
	"fmt"
	"io"
)

// MaxSize bounds one frame, so a corrupt length cannot ask for gigabytes.
const MaxSize = 16 << 20

// Write writes p as one frame.
func Write(w io.Writer, p []byte) error {
	buf := make([]byte, 4+len(p))
	binary.BigEndian.PutUint32(buf, uint32(len(p)))
	copy(buf[4:], p)
	_, err := w.Write(buf)
	return err
}

// Read reads one frame into buf (grown as needed) and returns it.
func Read(r io.Reader, buf []byte) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > MaxSize {
		return nil, fmt.Errorf("frame of %d bytes is over the %d-byte limit", n, MaxSize)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}
