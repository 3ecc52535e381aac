package kv

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
)

func sampleOwn() map[string]*layer {
	a := &layer{tree: newTree()}
	a.tree.ReplaceOrInsert(entry{key: []byte("k1"), value: []byte("v1")})
	a.tree.ReplaceOrInsert(entry{key: []byte("k2")})
	a.tree.ReplaceOrInsert(entry{key: []byte("k3"), value: empty})
	b := &layer{tree: newTree(), cleared: true}
	b.tree.ReplaceOrInsert(entry{key: []byte("x"), value: []byte("y")})
	return map[string]*layer{"a": a, "b": b}
}

// FuzzReadSegment feeds a segment reader any bytes after a valid header:
// it must not panic, and every record it accepts must encode back to the
// bytes it was read from.
func FuzzReadSegment(f *testing.F) {
	var id [16]byte
	seg := header(id, 3)
	seg = append(seg, encodeRecord(4, sampleOwn())...)
	seg = append(seg, encodeRecord(5, map[string]*layer{"a": {tree: newTree(), cleared: true}})...)
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add(header(id, 0))
	f.Add([]byte("cairnjl1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, ok := readSegment(bytes.NewReader(data), 0)
		if !ok {
			return
		}
		for i, rec := range u.records {
			if i > 0 && rec.seq != u.records[i-1].seq+1 {
				t.Fatalf("records %d and %d are not consecutive", u.records[i-1].seq, rec.seq)
			}
			roundTrip(t, rec.seq, rec.own)
		}
	})
}

// FuzzDecodeRecord decodes any payload: no panic, and what decodes
// encodes back to the same payload.
func FuzzDecodeRecord(f *testing.F) {
	rec := encodeRecord(9, sampleOwn())
	f.Add(rec[frameSize:])
	f.Add([]byte{'B', 1, 'a', 'P', 1, 'k', 0})
	f.Add([]byte{'B', 1, 'a', 'C', 'D', 1, 'k'})
	f.Fuzz(func(t *testing.T, payload []byte) {
		own, err := decodeRecord(payload)
		if err != nil {
			return
		}
		roundTrip(t, 9, own)
	})
}

// roundTrip checks that own, encoded as record seq, decodes to the same
// changes.
func roundTrip(t *testing.T, seq uint64, own map[string]*layer) {
	t.Helper()
	enc := encodeRecord(seq, own)
	u, ok := readSegment(bytes.NewReader(append(header([16]byte{}, 0), enc...)), 0)
	if !ok || len(u.records) != 1 || u.records[0].seq != seq {
		t.Fatalf("record %d encodes to bytes that do not read back", seq)
	}
	own2 := u.records[0].own
	if a, b := describeOwn(own), describeOwn(own2); a != b {
		t.Fatalf("record %d changes after a round trip:\n%s\n%s", seq, a, b)
	}
}

// describeOwn prints changes in a canonical form: buckets by name, a
// bucket with nothing to do left out.
func describeOwn(own map[string]*layer) string {
	var out bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(own)) {
		l := own[name]
		if l.tree.Len() == 0 && !l.cleared {
			continue
		}
		fmt.Fprintf(&out, "%q cleared=%v\n", name, l.cleared)
		l.tree.Ascend(func(e entry) bool {
			fmt.Fprintf(&out, "  %q %q %v\n", e.key, e.value, e.value == nil)
			return true
		})
	}
	return out.String()
}
