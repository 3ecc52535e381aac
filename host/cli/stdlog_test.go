package cli

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLibraryLogsFollowTheLogFormat: lines libraries write through log and
// log/slog (mcp-go's HTTP transport uses slog.Default) come out as JSON
// objects with their level and attributes when the format is json.
func TestLibraryLogsFollowTheLogFormat(t *testing.T) {
	prevLog, prevFlags, prevSlog := log.Writer(), log.Flags(), slog.Default()
	t.Cleanup(func() { log.SetOutput(prevLog); log.SetFlags(prevFlags); slog.SetDefault(prevSlog) })

	var buf bytes.Buffer
	routeLibraryLogs(hclog.New(&hclog.LoggerOptions{Name: "cairn", Output: &buf, Level: hclog.Info, JSONFormat: true}))
	slog.Default().With("sessionID", "s1").WithGroup("http").Error("Failed to write SSE event", "err", "broken pipe")
	slog.Debug("below the level")
	log.Printf("[WARN] from the standard logger")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	want := []map[string]any{
		{"@level": "error", "@message": "Failed to write SSE event", "sessionID": "s1", "http.err": "broken pipe", "@module": "cairn.lib"},
		{"@level": "warn", "@message": "from the standard logger", "@module": "cairn.lib"},
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, line)
			}
		}
	}
}
