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
// as tooLong: memory never grows past the limit.
func ReadLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		part, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(part) > limit+1 { // +1: the newline itself
				tooLong, buf = true, nil
			} else {
				buf = append(buf, part...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, tooLong, err
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
