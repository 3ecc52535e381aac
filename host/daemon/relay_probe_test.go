package daemon

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// referenceProbe is how the relay read every line before probeDaemonLine.
func referenceProbe(line []byte) (daemonLine, bool) {
	var p daemonLine
	if json.Unmarshal(line, &p) != nil {
		return daemonLine{}, false
	}
	return p, true
}

func TestProbeDaemonLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line   string
		id     string
		method string
		log    bool
	}{
		{line: `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`, id: `7`},
		{line: `{"jsonrpc":"2.0","id":-1.5e3,"result":{}}`, id: `-1.5e3`},
		{line: `{"jsonrpc":"2.0","id":"a\"b\\","error":{"code":-32603,"message":"x"}}`, id: `"a\"b\\"`},
		{line: `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}`, id: `3`, method: "sampling/createMessage"},
		{line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, method: "notifications/progress"},
		{line: `{"cairn_log":"hello"}`, log: true},
		{line: `{"id":9,"jsonrpc":"2.0","result":{}}`, id: `9`},
	} {
		p, ok := probeDaemonLine([]byte(c.line))
		if !ok || string(p.ID) != c.id || p.Method != c.method || (p.Log != nil) != c.log {
			t.Errorf("%s: got %+v %v", c.line, p, ok)
		}
	}
	if _, ok := probeDaemonLine([]byte(`not json`)); ok {
		t.Error("a line that is not JSON was accepted")
	}
}

// FuzzProbeDaemonLine: on every line the reference reads as a JSON object,
// the fast probe agrees with it — but for a response that names its id or a
// method a second time after its result, which is no JSON-RPC message and
// which the daemon never writes (the reference would take the later key).
func FuzzProbeDaemonLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":"x","error":{}}`,
		`{"jsonrpc":"2.0","id":01,"result":{}}`, `{"jsonrpc":"2.0","id":"\u0041","result":1}`,
		`{"jsonrpc":"2.0","method":"m"}`, `{"cairn_log":"x"}`, `{"jsonrpc":"2.0","id":1,"result":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, wok := referenceProbe(line)
		if !wok {
			return // the daemon writes JSON; a broken line may go either way
		}
		if bytes.HasPrefix(line, responsePrefix) && (bytes.Count(line, []byte(`"id"`)) > 1 || bytes.Contains(line, []byte(`"method"`))) {
			return
		}
		got, ok := probeDaemonLine(line)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %+v %v, want %+v", line, got, ok, want)
		}
	})
}

// referenceClientProbe is how the relay read every client line before
// probeClientLine.
func referenceClientProbe(line []byte) clientLine {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	_ = json.Unmarshal(line, &probe)
	p := clientLine{ID: probe.ID, RawMethod: probe.Method}
	_ = json.Unmarshal(probe.Method, &p.Method)
	return p
}

var clientLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_get","arguments":{"task_id":"T-1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{ "id" : "a\"b" , "method" : "ping" }`,
	`{"id":null,"method":"ping"}`, `{"id":1,"method":7}`, `{"id":1,"method":null}`,
	`{"id":1,"method":"tools\/call"}`, `{"ID":1,"method":"ping"}`, `{"id":1,"Method":"ping"}`,
	`{"id":1,"id":2,"method":"ping"}`, `{"\u0069d":1,"method":"ping"}`, `{"id":[1],"method":{"a":1}}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`, `[{"id":1}]`, `"x"`, `not json`, `{"id":1,`, ``,
	"{\"method\":\"\x83\"}",
	`{"id":-1.5e3,"params":{"id":9,"method":"x"},"method":"m"}`,
}

func TestProbeClientLineMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, l := range clientLines {
		if got, want := probeClientLine([]byte(l)), referenceClientProbe([]byte(l)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", l, got, want)
		}
	}
}

// FuzzProbeClientLine: the fast probe reads every line as encoding/json
// does.
func FuzzProbeClientLine(f *testing.F) {
	for _, l := range clientLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, want := probeClientLine(line), referenceClientProbe(line)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %+v, want %+v", line, got, want)
		}
	})
}
