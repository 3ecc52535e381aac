package e2e

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCallWithLogLevel measures what a session pays for asking for
// log lines: its tool calls then carry a log level (the plugin's log lines
// come back on the call's own transport, the call lane, ahead of the
// result), and the host writes its own lines per call. Each figure is beside the floor
// measured in the same run; run with -benchtime 1x.
func BenchmarkCallWithLogLevel(b *testing.B) {
	floor, err := startFloor(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer floor.close()
	tab := &table{}
	for _, level := range []mcp.LoggingLevel{"", mcp.LoggingLevelEmergency, mcp.LoggingLevelDebug} {
		w := benchWorkspace(b)
		s := mustSession(b, w)
		if level != "" {
			//lint:ignore SA1019 logging/setLevel is the 2025-11-25 era's, measured here
			if err := s.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
				b.Fatal(err)
			}
		}
		created := s.call("task_create", map[string]any{"title": "benchmark task", "project": "proj-0"})
		id, _ := structured(w.t, created)["task_id"].(string)
		get := subjectCall(s, "task_get", map[string]any{"task_id": id})
		for i := 0; i < 100; i++ {
			if err := get(); err != nil {
				b.Fatal(err)
			}
			_ = floor.call()
		}
		fl, sub, err := interleave(floor.call, get, 300, 3000, callBudget)
		if err != nil {
			b.Fatal(err)
		}
		name := "task_get, --no-daemon, no log level"
		if level != "" {
			name = "task_get, --no-daemon, log level " + string(level)
		}
		tab.add(latencyRow(name, fl, sub, 1.6))
		s.close()
	}
	tab.print()
}
