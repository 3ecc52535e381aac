package store

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The fast encoders write exactly what encoding/json writes, for every
// kind of value, plain or needing escapes.
func TestEventJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, data := range []any{
		nil,
		map[string]any{},
		map[string]any(nil),
		map[string]any{"task_id": "T-1", "sequence": uint64(7), "chain_position": 3, "ok": true, "none": nil},
		map[string]any{"labels": []string{"a", "b<c>"}, "empty": []string{}, "nil": []string(nil)},
		map[string]any{"title": "quote \" back\\slash <b> & \u2028 é \x00 \xff", "z": int64(-5)},
		map[string]any{"progress": 12.5, "nested": map[string]any{"a": 1}},
		map[string]any{"ünïcode key": "v", "a\"b": "w"},
		[]int{1, 2},
	} {
		want, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalEventData(data)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("marshalEventData(%#v) = %s, %v; want %s", data, got, err, want)
		}
		for _, ev := range []OutboxEvent{
			{ID: "evt_0a", Type: "task.created", Time: "2026-11-23T10:00:00.000Z", Data: want},
			{ID: "evt_0b", Type: "t<x>", Time: "", Data: want, Owner: "host:1 <é>", Until: 1234, Attempts: 2},
			{ID: "evt_0c", Type: "t", Data: nil},
		} {
			wantEv, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := marshalOutboxEvent(ev); !bytes.Equal(got, wantEv) {
				t.Errorf("marshalOutboxEvent = %s, want %s", got, wantEv)
			}
		}
	}
}

func FuzzEventJSON(f *testing.F) {
	f.Add("T-1", "title <b>", int64(3), true)
	f.Add("\u2028", "\xff\x00\"", int64(-1), false)
	f.Fuzz(func(t *testing.T, k, v string, n int64, flag bool) {
		data := map[string]any{k: v, "n": n, "flag": flag, "list": []string{v, k}}
		want, _ := json.Marshal(data)
		got, err := marshalEventData(data)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshalEventData = %s, %v; want %s", got, err, want)
		}
		ev := OutboxEvent{ID: k, Type: v, Time: v, Data: want, Owner: k, Until: n}
		wantEv, _ := json.Marshal(ev)
		if got := marshalOutboxEvent(ev); !bytes.Equal(got, wantEv) {
			t.Fatalf("marshalOutboxEvent = %s, want %s", got, wantEv)
		}
	})
}
