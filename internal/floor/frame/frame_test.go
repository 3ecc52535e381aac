package frame

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestFramesComeBackWhole(t *testing.T) {
	t.Parallel()
	var pipe bytes.Buffer
	msgs := [][]byte{[]byte(`{"task_id":"T-1"}`), {}, bytes.Repeat([]byte("x"), 70_000)}
	for _, m := range msgs {
		if err := Write(&pipe, m); err != nil {
			t.Fatal(err)
		}
	}
	var buf []byte
	for i, want := range msgs {
		got, err := Read(&pipe, buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
		}
		buf = got
	}
}

func TestAFrameOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	var head [4]byte
	binary.BigEndian.PutUint32(head[:], MaxSize+1)
	_, err := Read(bytes.NewReader(head[:]), nil)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v, want a refusal naming the limit", err)
	}
}
