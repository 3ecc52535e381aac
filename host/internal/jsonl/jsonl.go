// Package jsonl reads newline-delimited JSON-RPC with a bound on each
// message, for every transport that reads lines (the relay, the daemon's
// sessions, stdio).
package jsonl

import (
	"bufio"
	"encoding/json"
	"fmt"
)

// ReadLine reads one newline-terminated message of at most limit bytes. A
// longer message is consumed to its newline without being kept and reported
// as tooLong: memory never grows past the limit. The line is newly
// allocated, of its exact size: a long line is gathered in the reader's
// pieces and copied once, where growing one slice would leave several
// times its size behind for the collector (docs/decisions.md D33).
func ReadLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var parts [][]byte
	size := 0
	for {
		part, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case size+len(part) > limit+1: // +1: the newline itself
			tooLong, parts = true, nil
		case err == bufio.ErrBufferFull:
			parts = append(parts, append([]byte(nil), part...))
			size += len(part)
		case size+len(part) > 0:
			line = make([]byte, 0, size+len(part))
			for _, p := range parts {
				line = append(line, p...)
			}
			line = append(line, part...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// TooLongMessage is the text of the JSON-RPC error answering a message
// over the limit.
func TooLongMessage(limit int) string {
	return fmt.Sprintf("message larger than this session's limit of %d bytes (CAIRN_MAX_MESSAGE); it was discarded unread", limit)
}

// TooLongError is that JSON-RPC error as one line (invalid request, null id).
func TooLongError(limit int) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": TooLongMessage(limit)}})
	return append(b, '\n')
}
