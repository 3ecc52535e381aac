package vision

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// TestComputerToolSetting: CAIRN_COMPUTER_TOOL picks one of the three
// versions (by tool type, beta header or the older pair); anything else
// degrades health with the reason and keeps the default, computer_20251124.
func TestComputerToolSetting(t *testing.T) {
	api := visiontest.New(t, "k-v")
	cases := []struct {
		setting, toolType, beta string
		degraded                bool
	}{
		{"", "computer_20251124", "computer-use-2025-11-24", false},
		{"computer_20250124", "computer_20250124", "computer-use-2025-01-24", false},
		{"computer-use-2024-10-22", "computer_20241022", "computer-use-2024-10-22", false},
		{"computer_20241022,computer-use-2024-10-22", "computer_20241022", "computer-use-2024-10-22", false},
		{"computer_20250124,computer-use-2024-10-22", "computer_20251124", "computer-use-2025-11-24", true},
		{"computer_29990101", "computer_20251124", "computer-use-2025-11-24", true},
	}
	for _, c := range cases {
		t.Run(c.setting, func(t *testing.T) {
			p, _ := plugin(t, map[string]string{"ANTHROPIC_API_KEY": "k-v", "ANTHROPIC_BASE_URL": api.URL, "CAIRN_COMPUTER_TOOL": c.setting})
			r := call(t, p, "computer_beta_status", map[string]any{})
			var out BetaStatusOutput
			if r.Err != nil || json.Unmarshal(r.Output, &out) != nil {
				t.Fatalf("status %+v", r.Err)
			}
			zoom := out.Definitions[0].EnableZoom != nil && *out.Definitions[0].EnableZoom
			if out.Tool.ToolType != c.toolType || out.Tool.Beta != c.beta || out.Model != "claude-sonnet-5-5" || !out.Available || len(out.Versions) != 3 || zoom != (c.toolType == "computer_20251124") {
				t.Fatalf("status %+v", out)
			}
			h := sdktest.Health(context.Background(), p)
			if (h.Status == "degraded") != c.degraded || (c.degraded && !strings.Contains(h.Message, "CAIRN_COMPUTER_TOOL")) {
				t.Fatalf("health %+v", h)
			}
			// The availability check carried the version's beta header.
			reqs := api.Requests()
			last := reqs[len(reqs)-1]
			if last.Path != "/v1/models/claude-sonnet-5-5" || last.Header.Get("Anthropic-Beta") != c.beta {
				t.Fatalf("check %s %v", last.Path, last.Header)
			}
		})
	}
}

// TestHostedModelChecks: computer_session_start reports whether the hosted
// model answers (direct control needs none); computer_agent_run refuses
// before starting when it does not; computer_sequence steps need no params
// for actions that take none.
func TestHostedModelChecks(t *testing.T) {
	srv := xvfb.Start(t, 640, 480)
	api := visiontest.New(t, "k-h")
	api.Models = []string{"claude-sonnet-5-5"}
	good, _ := plugin(t, map[string]string{"ANTHROPIC_API_KEY": "k-h", "ANTHROPIC_BASE_URL": api.URL, "DISPLAY": srv.Display})
	gone, _ := plugin(t, map[string]string{"ANTHROPIC_API_KEY": "k-h", "ANTHROPIC_BASE_URL": api.URL, "DISPLAY": srv.Display, "CAIRN_VISION_MODEL": "claude-gone-1", "CAIRN_VISION_MAX_RETRIES": "0"})
	nokey, _ := plugin(t, map[string]string{"DISPLAY": srv.Display})

	var st map[string]any
	r := call(t, good, "computer_session_start", map[string]any{"captureScreenshots": false})
	if r.Err != nil || json.Unmarshal(r.Output, &st) != nil || st["betaAvailable"] != true {
		t.Fatalf("start with a good model: %s %+v", r.Output, r.Err)
	}
	r = call(t, gone, "computer_session_start", map[string]any{"captureScreenshots": false})
	var st2 map[string]any
	if r.Err != nil || json.Unmarshal(r.Output, &st2) != nil || st2["betaAvailable"] != false || !strings.Contains(st2["betaUnavailableReason"].(string), "404") {
		t.Fatalf("start with a gone model: %s %+v", r.Output, r.Err)
	}
	r = call(t, nokey, "computer_session_start", map[string]any{"captureScreenshots": false})
	var st3 map[string]any
	if r.Err != nil || json.Unmarshal(r.Output, &st3) != nil || st3["betaAvailable"] != nil {
		t.Fatalf("direct control without a key: %s %+v", r.Output, r.Err)
	}
	before := len(api.MessageRequests())
	r = call(t, gone, "computer_agent_run", map[string]any{"task": "open a terminal"})
	if r.Err == nil || r.Err.Code != "ERR_UPSTREAM_FAILED" || !strings.Contains(r.Err.Message, "claude-gone-1") || len(api.MessageRequests()) != before {
		t.Fatalf("agent run with a gone model: %+v", r.Err)
	}
	r = call(t, gone, "computer_agent_run", map[string]any{"task": "x", "sessionId": st2["sessionId"]})
	if r.Err == nil || r.Err.Code != "ERR_UPSTREAM_FAILED" {
		t.Fatalf("agent run on a session with a gone model: %+v", r.Err)
	}

	seq := call(t, good, "computer_sequence", map[string]any{"sessionId": st["sessionId"], "delayBetweenActions": 0, "actions": []map[string]any{
		{"action": "screenshot"}, {"action": "left_mouse_down"}, {"action": "left_mouse_up"}, {"action": "wait", "params": map[string]any{"durationMs": 0}},
		{"action": "zoom", "params": map[string]any{"region": []int{0, 0, 64, 48}}},
	}})
	var so map[string]any
	if seq.Err != nil || json.Unmarshal(seq.Output, &so) != nil || so["completedActions"] != float64(5) || len(seq.Content) != 2 {
		t.Fatalf("sequence without params: %s %+v", seq.Output, seq.Err)
	}
}

// TestAgentDisplayFitsTheModel: sessions report the screen's real size,
// except the hosted-model loop's own session, which is scaled down to the
// model's image limits so its coordinates stay exact.
func TestAgentDisplayFitsTheModel(t *testing.T) {
	srv := xvfb.Start(t, 1920, 1080)
	api := visiontest.New(t, "k-d")
	p, _ := plugin(t, map[string]string{"ANTHROPIC_API_KEY": "k-d", "ANTHROPIC_BASE_URL": api.URL, "DISPLAY": srv.Display})
	var st map[string]any
	r := call(t, p, "computer_session_start", map[string]any{"captureScreenshots": false})
	if r.Err != nil || json.Unmarshal(r.Output, &st) != nil {
		t.Fatal(r.Err)
	}
	if cfg := st["config"].(map[string]any); cfg["displayWidth"] != float64(1920) || cfg["displayHeight"] != float64(1080) {
		t.Fatalf("direct session %v, want the screen's 1920x1080", cfg)
	}
	api.Push(visiontest.TextReply("nothing to do"))
	if r := call(t, p, "computer_agent_run", map[string]any{"task": "look"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	def := api.MessageRequests()[0].Body["tools"].([]any)[0].(map[string]any)
	w, h := imaging.FitWithin(1920, 1080, 1568, 1_150_000)
	if w >= 1920 || def["display_width_px"] != float64(w) || def["display_height_px"] != float64(h) {
		t.Fatalf("agent display %v, want %dx%d", def, w, h)
	}
}
