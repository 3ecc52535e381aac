package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The floors of cairn's own shape answer as the benchmarks expect:
// server_ping through the relay, task_get through the relay and the plugin
// pipe, and task_get from the plugin without a relay, with the plugin's
// task.
func TestShapedFloorsAnswer(t *testing.T) {
	t.Parallel()
	for _, shape := range []floorShape{shapeRelay, shapeRelayPlugin, shapePlugin} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			f, err := startShapedFloor(ctx, shape)
			if err != nil {
				t.Fatal(err)
			}
			defer f.close()
			req := mcp.CallToolRequest{}
			req.Params.Name = shape.tool
			req.Params.Arguments = map[string]any{"task_id": "T-1"}
			res, err := f.c.CallTool(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("%s failed: %v", shape.tool, res.Content)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			switch shape.tool {
			case "task_get":
				if got["task_id"] != "T-5001" || got["status"] != "todo" {
					t.Fatalf("task_get answered %s, want the plugin's task", raw)
				}
			case "server_ping":
				if got["ok"] != true {
					t.Fatalf("server_ping answered %s", raw)
				}
			}
			if len(f.pids()) != map[bool]int{true: 2, false: 1}[shape.relay] {
				t.Fatalf("pids %v", f.pids())
			}
		})
	}
}
