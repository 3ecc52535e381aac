package seam_test

import (
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The host configures each plugin with its workspace, data dir, mode and
// settings before the first call.
func ExampleConfig() {
	cfg := seam.Config{Root: "/work/app", DataDir: "/work/app/.cairn/data", Mode: "FULL", HostVersion: "1.4.0",
		Settings: map[string]string{"webhook_timeout_ms": "2000"}}
	fmt.Println(cfg.Mode, cfg.Settings["webhook_timeout_ms"])
	// Output: FULL 2000
}

// A plugin that offers a call lane answers its configuration with the
// lane's socket; the host then sends its tool calls there.
func ExampleConfigured() {
	for _, c := range []seam.Configured{{}, {CallLane: "/tmp/cairn-lane-1.sock", LaneEventBatches: true}} {
		if c.CallLane == "" {
			fmt.Println("calls on the stream")
			continue
		}
		fmt.Println("calls on the lane; event batches:", c.LaneEventBatches)
	}
	// Output:
	// calls on the stream
	// calls on the lane; event batches: true
}

// A durable publisher drops what the host acknowledged, and sends again
// an event whose local handler failed.
func ExamplePublishAck() {
	pending := map[uint64]string{1: "task.created", 2: "task.updated", 3: "task.deleted"}
	ack := seam.PublishAck{Seq: 2, Retry: true}
	for seq := range uint64(3) {
		seq++
		switch {
		case seq == ack.Seq && ack.Retry:
			fmt.Println("send again:", pending[seq])
		case seq <= ack.Seq:
			delete(pending, seq)
		}
	}
	fmt.Println(len(pending), "pending")
	// Output:
	// send again: task.updated
	// 2 pending
}
