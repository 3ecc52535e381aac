package daemon

import (
	"bytes"
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// daemonLine is what the relay needs to know of a line from the daemon.
type daemonLine struct {
	// ID is the raw id of a request or response (nil for a notification).
	ID json.RawMessage `json:"id"`
	// Method is set on requests and notifications, empty on responses.
	Method string `json:"method"`
	// Log is set on a RelayLogLine (text for the relay's stderr).
	Log *string `json:"cairn_log"`
}

// responsePrefix begins every response the daemon writes (the host's
// writer, jsonrpc.AppendMessage, and encoding/json alike put jsonrpc and id first).
var responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)

// probeDaemonLine reads a line from the daemon. A response — most lines,
// and the long ones: a page of tasks — is recognised from its first bytes,
// without decoding the rest; anything else is decoded as before. ok is
// false for a line that is not JSON.
func probeDaemonLine(line []byte) (p daemonLine, ok bool) {
	if id, ok := responseID(line); ok {
		return daemonLine{ID: id}, true
	}
	if json.Unmarshal(line, &p) != nil {
		return daemonLine{}, false
	}
	return p, true
}

// responseID returns the id of a line that starts
// {"jsonrpc":"2.0","id":<id>,"result": (or ,"error":), where <id> is a
// number or a string; false for any other line.
func responseID(line []byte) (json.RawMessage, bool) {
	rest, ok := bytes.CutPrefix(line, responsePrefix)
	if !ok || len(rest) == 0 {
		return nil, false
	}
	n := 0
	switch c := rest[0]; {
	case c == '"':
		n = 1
		for ; n < len(rest) && rest[n] != '"'; n++ {
			switch {
			case rest[n] == '\\':
				n++ // the escaped byte cannot end the string
			case rest[n] < 0x20:
				return nil, false
			}
		}
		if n >= len(rest) {
			return nil, false
		}
		n++
	case c == '-' || c >= '0' && c <= '9':
		for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || bytes.IndexByte([]byte("-+.eE"), rest[n]) >= 0) {
			n++
		}
		if !json.Valid(rest[:n]) {
			return nil, false
		}
	default:
		return nil, false
	}
	after := rest[n:]
	if !bytes.HasPrefix(after, []byte(`,"result":`)) && !bytes.HasPrefix(after, []byte(`,"error":`)) {
		return nil, false
	}
	return rest[:n:n], true
}

// clientLine is what the relay needs of a client's message: its raw id and
// method (raw: a request whose method is not a string is still a request,
// answered by the daemon and tracked like any other), and the method as a
// string when it is one.
type clientLine struct {
	ID, RawMethod json.RawMessage
	Method        string
}

// probeClientLine reads a client's message as encoding/json would into
// {id, method} (nothing for a line that is not JSON or not an object), in
// one scan without reflection: every request crosses it. A message whose
// shape the scan is not sure of (a key written with escapes or in another
// case, a repeated key) is decoded as before.
func probeClientLine(line []byte) clientLine {
	if !json.Valid(line) {
		return clientLine{}
	}
	if p, ok := scanClientLine(line); ok {
		return p
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	_ = json.Unmarshal(line, &probe)
	p := clientLine{ID: probe.ID, RawMethod: probe.Method}
	_ = json.Unmarshal(probe.Method, &p.Method)
	return p
}

// scanClientLine is probeClientLine's fast path, for a valid line; false
// when the line needs encoding/json.
func scanClientLine(line []byte) (p clientLine, ok bool) {
	var spans [2][2]int
	if !(&rawjson.Scanner{B: line}).Members([]string{"id", "method"}, spans[:]) {
		return p, false
	}
	if id := spans[0]; id[1] > 0 {
		p.ID = line[id[0]:id[1]:id[1]]
	}
	if m := spans[1]; m[1] > 0 {
		p.RawMethod = line[m[0]:m[1]:m[1]]
		if p.RawMethod[0] == '"' {
			if p.Method, ok = rawjson.PlainString(p.RawMethod); !ok {
				return p, false // encoding/json would unescape or replace
			}
		}
	}
	return p, true
}
