package trail

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// sameAsGeneral fails t unless appendFast, when it takes v, writes exactly
// what appendValue writes, and reports whether it took v.
func sameAsGeneral(t *testing.T, v any) bool {
	t.Helper()
	fast, ok := appendFast(nil, v, 0)
	slow, err := appendValue(nil, v, "$", 0)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%#v: the fast path wrote %s where the general one refuses: %v", v, fast, err)
	}
	if !bytes.Equal(fast, slow) {
		t.Fatalf("%#v:\n fast    %s\n general %s", v, fast, slow)
	}
	return true
}

func TestFastPathWritesWhatTheGeneralOneWrites(t *testing.T) {
	t.Parallel()
	taken := []any{
		nil, true, false, "", "a<b>&\u2028\u2029\"\\\n\x01é😀",
		0.0, math.Copysign(0, -1), 1e21, 1e-7, 123.456, math.NaN(), math.Inf(-1), float32(0.1),
		int(-3), int8(-8), int16(16), int32(1 << 30), int64(1) << 60, uint(7), uint8(255), uint16(9), uint32(1 << 31), uint64(1) << 63,
		[]string(nil), []string{}, []string{"x", "<y>", ""},
		[]any(nil), []any{}, []any{1, "a", nil, []string{"b"}},
		map[string]any(nil), map[string]any{},
		// A task's created change as the task service builds it.
		map[string]any{"task_id": "T-12", "title": "Fix the <parser>", "description": "", "project": "web", "status": "backlog",
			"priority": "normal", "progress": 0.0, "assignee": "", "labels": []string{"bug", "ui"}, "created_at": "2026-11-27T10:30:44.394Z",
			"updated_at": "2026-11-27T10:30:44.394Z", "created_by": "claude", "updated_by": "claude", "sequence": uint64(12),
			"estimate_hours": 2.5, "depends_on": []string{"T-3", "T-9"}},
		// An update's.
		map[string]any{"status": "in_progress", "previous_status": "todo", "progress": 40.0, "blocked_reason": nil},
		map[string]any{"nested": map[string]any{"b": []any{map[string]any{"z": 1, "a": 2}}, "a": true}},
	}
	for _, v := range taken {
		if !sameAsGeneral(t, v) {
			t.Errorf("%#v: not taken by the fast path", v)
		}
	}
	declined := []any{
		"bad\xff", []string{"ok", "bad\xff"}, map[string]any{"k\xff": 1}, map[string]any{"k": "bad\xff"},
		map[string]any{"10": 1, "a": 2}, // an array-index key: JavaScript puts it first
		map[string]any{"a": map[string]any{"0": 1}},
		json.RawMessage(`{"b":1,"a":2}`), json.Number("1.50"), Object{{"z", 1}}, struct{ A int }{1},
		map[string]string{"a": "b"}, []int{1}, &[]string{"x"},
	}
	for _, v := range declined {
		if sameAsGeneral(t, v) {
			t.Errorf("%#v: taken by the fast path, which should leave it to the general one", v)
		}
	}
}

// TestFastPathOnRandomValues compares both paths on random nested values
// of the types the fast path takes, array-index keys and invalid UTF-8
// among them.
func TestFastPathOnRandomValues(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 1))
	strs := append(interestingStrings(), "0", "7", "4294967294", "4294967295", "01", "bad\xff", "k", "key", "é")
	str := func() string { return strs[rng.IntN(len(strs))] }
	var gen func(depth int) any
	gen = func(depth int) any {
		n := 9
		if depth > 3 {
			n = 6 // leaves only
		}
		switch rng.IntN(n) {
		case 0:
			return nil
		case 1:
			return rng.IntN(2) == 0
		case 2:
			return str()
		case 3:
			return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
		case 4:
			return rng.Int64() >> rng.IntN(64)
		case 5:
			out := make([]string, rng.IntN(4))
			for i := range out {
				out[i] = str()
			}
			return out
		case 6, 7:
			out := make([]any, rng.IntN(4))
			for i := range out {
				out[i] = gen(depth + 1)
			}
			return out
		default:
			out := map[string]any{}
			for range rng.IntN(5) {
				out[str()] = gen(depth + 1)
			}
			return out
		}
	}
	took := 0
	for range 5000 {
		if sameAsGeneral(t, gen(0)) {
			took++
		}
	}
	if took < 1000 {
		t.Fatalf("the fast path took only %d of 5000 random values", took)
	}
}

func FuzzStringifyFastPath(f *testing.F) {
	for _, s := range interestingStrings() {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		for _, v := range []any{s, x, []string{s, s}, map[string]any{s: x, "k": s}, []any{s, x, map[string]any{"a": []string{s}}}} {
			sameAsGeneral(t, v)
		}
	})
}

// BenchmarkStringifyChange encodes a task's created change, the canonical
// JSON every task write hashes into its chain.
func BenchmarkStringifyChange(b *testing.B) {
	v := map[string]any{"task_id": "T-12", "title": "Fix the parser cache", "description": "Details about the login page.", "project": "web",
		"status": "backlog", "priority": "normal", "progress": 0.0, "assignee": "", "labels": []string{"bug", "ui"},
		"created_at": "2026-11-27T10:30:44.394Z", "updated_at": "2026-11-27T10:30:44.394Z", "created_by": "claude", "updated_by": "claude",
		"sequence": uint64(12)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Stringify(v); err != nil {
			b.Fatal(err)
		}
	}
}
