package e2e

import (
	"context"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
)

// TestVisionComputerToolVersions runs the real binary with each computer
// tool version: the hosted-model loop sends the version's tool type and
// beta header, executes an action only that version (and later) defines,
// and answers an action the version lacks with an error tool_result the
// model can read. The default is computer_20251124 with claude-sonnet-5-5.
func TestVisionComputerToolVersions(t *testing.T) {
	srv := xvfb.Start(t, 1024, 768)
	cases := []struct {
		setting, toolType, beta string
		// ok runs under this version; refused does not exist in it.
		ok, refused map[string]any
	}{
		{"", "computer_20251124", "computer-use-2025-11-24",
			map[string]any{"action": "zoom", "region": []any{0, 0, 100, 75}}, map[string]any{"action": "hover"}},
		{"computer_20250124", "computer_20250124", "computer-use-2025-01-24",
			map[string]any{"action": "triple_click", "coordinate": []any{10, 10}}, map[string]any{"action": "zoom", "region": []any{0, 0, 100, 75}}},
		{"computer_20241022", "computer_20241022", "computer-use-2024-10-22",
			map[string]any{"action": "double_click"}, map[string]any{"action": "scroll", "scroll_direction": "down"}},
	}
	for _, c := range cases {
		t.Run(c.toolType, func(t *testing.T) {
			api := visiontest.New(t, "sk-ver")
			api.Betas = []string{c.beta}
			env := []string{visionToolsets, "ANTHROPIC_API_KEY=sk-ver", "ANTHROPIC_BASE_URL=" + api.URL, "DISPLAY=" + srv.Display}
			if c.setting != "" {
				env = append(env, "CAIRN_COMPUTER_TOOL="+c.setting)
			}
			s := newWorkspace(t).serve(env...)
			api.Push(
				visiontest.ToolUseReply("", visiontest.ToolUse{ID: "ok", Input: c.ok}),
				visiontest.ToolUseReply("", visiontest.ToolUse{ID: "no", Input: c.refused}),
				visiontest.TextReply("finished"),
			)
			run := s.call("computer_agent_run", map[string]any{"task": "try both", "maxActions": 5})
			rg := structured(t, run)
			if run.IsError || rg["stopReason"] != "end_turn" || rg["actionsExecuted"] != float64(1) || rg["actionsRefused"] != float64(1) {
				t.Fatalf("agent run: %v", rg)
			}
			reqs := api.MessageRequests()
			for _, r := range reqs {
				def := r.Body["tools"].([]any)[0].(map[string]any)
				if r.Header.Get("Anthropic-Beta") != c.beta || def["type"] != c.toolType || r.Body["model"] != "claude-sonnet-5-5" {
					t.Fatalf("request %q %v %v", r.Header.Get("Anthropic-Beta"), def, r.Body["model"])
				}
			}
			okRes := lastToolResult(t, reqs[1])
			if okRes["is_error"] == true {
				t.Fatalf("%v refused: %v", c.ok, okRes)
			}
			noRes := lastToolResult(t, reqs[2])
			text := fmt.Sprint(noRes["content"].([]any)[0].(map[string]any)["text"])
			if noRes["is_error"] != true || !strings.Contains(text, fmt.Sprint(c.refused["action"])) || !strings.Contains(text, c.toolType) {
				t.Fatalf("refusal: %v", noRes)
			}
			st := structured(t, s.call("computer_beta_status", map[string]any{}))
			if tool := st["tool"].(map[string]any); tool["toolType"] != c.toolType || tool["beta"] != c.beta || st["available"] != true {
				t.Fatalf("beta status %v", st)
			}
		})
	}
}

func lastToolResult(t *testing.T, r visiontest.Request) map[string]any {
	t.Helper()
	msgs := r.Body["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)["content"].([]any)[0].(map[string]any)
}

// TestVisionSequenceParamsOptional: through the host's schema validation, a
// computer_sequence step without params is accepted for actions that take
// none.
func TestVisionSequenceParamsOptional(t *testing.T) {
	srv := xvfb.Start(t, 640, 480)
	s := newWorkspace(t).serve(visionToolsets, "DISPLAY="+srv.Display)
	start := structured(t, s.call("computer_session_start", map[string]any{"captureScreenshots": false}))
	res := s.call("computer_sequence", map[string]any{"sessionId": start["sessionId"], "delayBetweenActions": 0, "actions": []any{
		map[string]any{"action": "screenshot"},
		map[string]any{"action": "left_click"},
		map[string]any{"action": "mouse_move", "params": map[string]any{"x": 3, "y": 4}},
	}})
	got := structured(t, res)
	if res.IsError || got["completedActions"] != float64(3) || len(imageBlocks(res)) != 1 {
		t.Fatalf("sequence: %v", got)
	}
}

// TestVisionLoadImageRefusesEscapes: a FIFO, a hard link to a file outside
// the root and a symlink leading out are refused with 400 naming the field
// and the rule, and the FIFO does not block the server (the calls carry a
// deadline, and the server answers a ping afterwards).
func TestVisionLoadImageRefusesEscapes(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	writePNG(t, w, "ok.png", color.White)
	src, err := os.ReadFile(filepath.Join(w.root, "ok.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.png"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(w.root, "pipe.png"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	if err := os.Link(filepath.Join(outside, "secret.png"), filepath.Join(w.root, "hard.png")); err != nil {
		t.Skipf("cannot hard-link from the temp dir into the workspace: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(w.root, "sym.png")); err != nil {
		t.Fatal(err)
	}
	s := w.serve(visionToolsets)
	for _, c := range []struct{ path, constraint string }{
		{"pipe.png", "regularFile"}, {"pipe.png", "regularFile"}, {"hard.png", "singleLink"}, {"sym.png", "insideRoot"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := s.callCtx(ctx, "vision_load_image", map[string]any{"path": c.path})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v (the call did not return)", c.path, err)
		}
		e, _ := structured(t, res)["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if !res.IsError || e["code"] != "ERR_INVALID_INPUT" || metaStatus(res) != 400 || d["field"] != "path" || d["constraint"] != c.constraint {
			t.Fatalf("%s: %v", c.path, structured(t, res))
		}
	}
	if res := s.call("vision_load_image", map[string]any{"path": "ok.png"}); res.IsError {
		t.Fatalf("a plain file after the refusals: %v", structured(t, res))
	}
}
