package lane

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Frame kinds.
const (
	kindCall   byte = 1
	kindCancel byte = 2
	kindResult byte = 3
	kindEvent  byte = 4
	kindEvents byte = 5
	// kindProgress and kindLog travel plugin → host, before the result
	// of the call they belong to.
	kindProgress byte = 6
	kindLog      byte = 7
)

// headerSize is the fixed header before every body.
const headerSize = 16

// deadlineSize is the call body's deadline prefix.
const deadlineSize = 8

// header is a decoded frame header.
type header struct {
	size uint32
	kind byte
	id   uint64
}

func putHeader(b []byte, h header) {
	binary.BigEndian.PutUint32(b[0:4], h.size)
	b[4], b[5], b[6], b[7] = h.kind, 0, 0, 0
	binary.BigEndian.PutUint64(b[8:16], h.id)
}

// errMalformed means the peer does not speak the lane: the connection cannot
// be trusted to be in step any more.
type errMalformed struct{ why string }

func (e errMalformed) Error() string { return "lane: malformed frame: " + e.why }

func parseHeader(b []byte) (header, error) {
	h := header{size: binary.BigEndian.Uint32(b[0:4]), kind: b[4], id: binary.BigEndian.Uint64(b[8:16])}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return h, errMalformed{"reserved header bytes are not zero"}
	}
	switch h.kind {
	case kindCall, kindCancel, kindResult, kindEvent, kindEvents, kindProgress, kindLog:
	default:
		return h, errMalformed{fmt.Sprintf("unknown frame kind %d", h.kind)}
	}
	return h, nil
}

// readBuffer is the size of a frame reader's buffer: a call or a result
// of ordinary size arrives, header and body, in one read.
const readBuffer = 64 << 10

// maxKeptBody bounds the body buffer a frame reader keeps for the next
// frame: a rare large frame does not pin its memory.
const maxKeptBody = 1 << 20

// frameReader reads frames from one connection. It is used by one goroutine.
type frameReader struct {
	r     io.Reader
	limit int
	hdr   [headerSize]byte
	// buf, once set up by next, buffers r: one read for header and body.
	buf *bufio.Reader
	// body is reused from frame to frame.
	body []byte
}

// next reads one frame. A body over the limit is skipped (the connection
// stays in step) and reported with tooLarge set and body nil. Any error
// means the connection is unusable. body is valid until the next call:
// callers decode it (protobuf copies what it keeps) before reading on.
func (fr *frameReader) next() (h header, body []byte, tooLarge bool, err error) {
	if fr.buf == nil {
		fr.buf = bufio.NewReaderSize(fr.r, readBuffer)
	}
	if _, err = io.ReadFull(fr.buf, fr.hdr[:]); err != nil {
		return h, nil, false, err
	}
	if h, err = parseHeader(fr.hdr[:]); err != nil {
		return h, nil, false, err
	}
	if int64(h.size) > int64(fr.limit) {
		if _, err = io.CopyN(io.Discard, fr.buf, int64(h.size)); err != nil {
			return h, nil, false, err
		}
		return h, nil, true, nil
	}
	if int(h.size) > cap(fr.body) {
		fr.body = make([]byte, h.size)
	}
	body = fr.body[:h.size]
	if cap(fr.body) > maxKeptBody {
		fr.body = nil
	}
	if _, err = io.ReadFull(fr.buf, body); err != nil {
		return h, nil, false, err
	}
	return h, body, false, nil
}
