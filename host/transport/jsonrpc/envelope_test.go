package jsonrpc

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestProbeMessageRefusesMalformedEnvelopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line    string
		handled bool
		code    int    // 0: no answer
		id      string // the answer's id as JSON
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, false, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, true, -32602, `1`},
		{`{"jsonrpc":"2.0","id":"k","method":"tools/call","params":[1]}`, true, -32602, `"k"`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":true}`, true, -32602, `2`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":5}}`, true, -32602, `3`},
		{`{"jsonrpc":"2.0","id":4,"method":5}`, true, -32600, `4`},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, true, -32600, `null`},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, true, -32600, `null`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, true, -32600, `null`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, true, -32600, `null`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, true, -32600, `null`},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, true, -32600, `null`},
		{`{"jsonrpc":"2.0","id":1,`, true, -32700, `null`},
		{`{"jsonrpc":"2.0"}`, true, -32600, `null`},
		// Malformed notifications and stray responses: no answer at all.
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`, true, 0, ""},
		{`{"jsonrpc":"2.0","method":7}`, true, 0, ""},
		{`{"jsonrpc":"2.0","id":[1],"result":{}}`, true, 0, ""},
	} {
		_, answer, handled := ProbeMessage([]byte(tc.line))
		if handled != tc.handled {
			t.Errorf("%s: handled %v, want %v", tc.line, handled, tc.handled)
			continue
		}
		switch {
		case tc.code == 0 && answer != nil:
			t.Errorf("%s: answered %+v, want no answer", tc.line, answer)
		case tc.code != 0 && answer == nil:
			t.Errorf("%s: no answer, want %d", tc.line, tc.code)
		case tc.code != 0:
			id, _ := json.Marshal(answer.ID)
			if answer.Error.Code != tc.code || string(id) != tc.id {
				t.Errorf("%s: answered %d with id %s, want %d with id %s", tc.line, answer.Error.Code, id, tc.code, tc.id)
			}
		}
	}
}

// FuzzProbeMessage: whatever arrives, a request with an id MCP allows is
// either passed on or answered with that same id; nothing panics.
func FuzzProbeMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"id":"x","method":"a","params":[]}`,
		`{"id":1e3}`, `[]`, `{"id":{"a":1},"method":"m"}`, `{"method":"m","params":{"_meta":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, answer, handled := ProbeMessage(line)
		if !handled || answer == nil || answer.ID.IsNil() {
			return
		}
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &env) != nil || !ValidID(env.ID) {
			t.Fatalf("%q answered with id %v, though its own id is not valid", line, answer.ID)
		}
		_ = p
	})
}

var probeLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_get","arguments":{"task_id":"T-1"}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.cairn/idempotencyKey":"k"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"id":1,"method":"ping","params":null}`, `{"id":1,"method":null}`, `{"id":1,"method":"p\u0069ng"}`,
	`{"id":1,"Method":"ping"}`, `{"id":1,"method":"ping","params":{"_META":{}}}`, `{"id":1,"id":2,"method":"ping"}`,
	`{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolversion":"x"}}}`,
	`{"id":1,"method":"m","params":{"_meta":null}}`, `{"id":1,"method":"m","params":{"_meta":{"a":[1,{"b":"}"}]}}}`,
	"{\"id\":1,\"method\":\"\xff\"}", `{"id":1,"method":"ping","params":"x"}`, `null`, `[1]`, `{"id":1,`,
}

// The scan reads a message as encoding/json reads it into a Probe.
func TestScanRequestMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, l := range probeLines {
		checkScanRequest(t, []byte(l))
	}
}

func FuzzScanRequest(f *testing.F) {
	for _, l := range probeLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkScanRequest(t, line) })
}

func checkScanRequest(t *testing.T, line []byte) {
	t.Helper()
	if !json.Valid(line) {
		return
	}
	got, ok := scanRequest(line)
	if !ok {
		return
	}
	var want Probe
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("%q: scanned, but encoding/json refuses it: %v", line, err)
	}
	got.Call = Spans{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: scanned %+v, encoding/json read %+v", line, got, want)
	}
}
