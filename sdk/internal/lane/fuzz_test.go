package lane

import (
	"bytes"
	"encoding/binary"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// FuzzFrameDecoder feeds arbitrary bytes to the frame reader and the call,
// event-batch, progress, log and result decoders: they must never panic,
// never return a body over the limit or of another length than its header
// says; a decoded batch answer is either a refusal or outcomes, and a
// progress or log frame decodes to an event of its own kind.
func FuzzFrameDecoder(f *testing.F) {
	call, _ := proto.Marshal(&pb.CallToolRequest{Tool: "task_get", Arguments: []byte(`{"id":"T-1"}`)})
	good := make([]byte, headerSize+deadlineSize)
	putHeader(good, header{size: uint32(deadlineSize + len(call)), kind: kindCall, id: 7})
	binary.BigEndian.PutUint64(good[headerSize:], 1)
	good = append(good, call...)
	f.Add(good, uint16(64))
	batch, _ := proto.Marshal(&pb.HandleEventsRequest{Events: []*pb.Event{{Id: "e1", Type: "task.created", Data: []byte(`{}`)}, {Type: "x"}}})
	events := make([]byte, headerSize+deadlineSize)
	putHeader(events, header{size: uint32(deadlineSize + len(batch)), kind: kindEvents, id: 8})
	events = append(events, batch...)
	f.Add(events, uint16(200))
	answer, _ := proto.Marshal(&pb.HandleEventsResponse{Outcomes: []*pb.EventOutcome{{}, {Error: &pb.ToolError{Code: "ERR_CONFLICT", Status: 409}}}})
	result := make([]byte, headerSize)
	putHeader(result, header{size: uint32(len(answer)), kind: kindResult, id: 8})
	f.Add(append(append(result, answer...), good...), uint16(300))
	prog, _ := proto.Marshal(&pb.Progress{Progress: 1, Total: 2, Message: "half"})
	progress := make([]byte, headerSize)
	putHeader(progress, header{size: uint32(len(prog)), kind: kindProgress, id: 7})
	logLine, _ := proto.Marshal(&pb.LogMessage{Level: "info", Logger: "x", Data: []byte(`"hi"`)})
	logFrame := make([]byte, headerSize)
	putHeader(logFrame, header{size: uint32(len(logLine)), kind: kindLog, id: 7})
	f.Add(append(append(append(progress, prog...), logFrame...), logLine...), uint16(100))
	f.Add(append(append(logFrame, logLine...), good...), uint16(4))
	f.Add(good[:20], uint16(64))
	f.Add(append(good, good...), uint16(8))
	f.Add([]byte("\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"), uint16(0))
	f.Add([]byte("\xff\xff\xff\xff\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		fr := frameReader{r: bytes.NewReader(data), limit: int(limit)}
		for {
			h, body, tooLarge, err := fr.next()
			if err != nil {
				return
			}
			if tooLarge {
				if body != nil || int(h.size) <= int(limit) {
					t.Fatalf("tooLarge with body %d, size %d, limit %d", len(body), h.size, limit)
				}
				continue
			}
			if len(body) != int(h.size) || len(body) > int(limit) {
				t.Fatalf("body %d bytes, header %d, limit %d", len(body), h.size, limit)
			}
			switch h.kind {
			case kindCall:
				req := &pb.CallToolRequest{}
				if _, err := decodeBody(body, req); err == nil && len(body) < deadlineSize {
					t.Fatal("decodeBody took a body without a deadline")
				}
			case kindEvents:
				req := &pb.HandleEventsRequest{}
				if _, err := decodeBody(body, req); err == nil && len(body) < deadlineSize {
					t.Fatal("decodeBody took a batch without a deadline")
				}
			case kindProgress, kindLog:
				ev, err := decodeEvent(h.kind, body)
				if err == nil && (h.kind == kindProgress) != (ev.progress != nil) || err == nil && (h.kind == kindLog) != (ev.log != nil) {
					t.Fatalf("kind %d decoded to %v", h.kind, ev)
				}
			case kindResult:
				c := &Client{limit: int(limit)}
				for _, batch := range []bool{false, true} {
					a := c.decodeResult(batch, h, body, false)
					if a.err == nil && (batch != (a.batch != nil) || batch == (a.res != nil)) {
						t.Fatalf("batch %v decoded to %v / %v", batch, a.res, a.batch)
					}
				}
			}
		}
	})
}
