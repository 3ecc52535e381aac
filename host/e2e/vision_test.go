package e2e

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
)

const visionToolsets = "CAIRN_TOOLSETS=core,vision,computer"

func writePNG(t *testing.T, w *workspace, rel string, c color.Color) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 32; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	w.writeFile(rel, b.String(), 0o644)
}

func imageBlocks(res *mcp.CallToolResult) []mcp.ImageContent {
	var out []mcp.ImageContent
	for _, c := range res.Content {
		if img, ok := c.(mcp.ImageContent); ok {
			out = append(out, img)
		}
	}
	return out
}

func TestVisionToolsetsAreOffByDefault(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve()
	for name := range s.tools() {
		if strings.HasPrefix(name, "vision_") || strings.HasPrefix(name, "computer_") {
			t.Fatalf("%s listed without CAIRN_TOOLSETS naming its toolset", name)
		}
	}
	s2 := newWorkspace(t).serve(visionToolsets)
	tools := s2.tools()
	for _, name := range []string{"vision_load_image", "vision_analyze", "vision_batch_analyze", "computer_session_start", "computer_action", "computer_agent_run"} {
		if _, ok := tools[name]; !ok {
			t.Fatalf("%s not listed with %s", name, visionToolsets)
		}
	}
}

func TestVisionNotConfiguredErrors(t *testing.T) {
	w := newWorkspace(t)
	writePNG(t, w, "shots/a.png", color.White)
	s := w.serve(visionToolsets) // no ANTHROPIC_API_KEY, no DISPLAY
	tools := s.tools()
	load := s.call("vision_load_image", map[string]any{"path": "shots/a.png"})
	if load.IsError || metaStatus(load) != 201 {
		t.Fatalf("loading needs no key: %v", structured(t, load))
	}
	id := structured(t, load)["imageId"]
	for _, c := range []struct {
		tool, variable string
		args           map[string]any
	}{
		{"vision_analyze", "ANTHROPIC_API_KEY", map[string]any{"imageId": id, "analysisType": "general"}},
		{"computer_session_start", "DISPLAY", map[string]any{}},
		{"computer_agent_run", "ANTHROPIC_API_KEY", map[string]any{"task": "open a terminal"}},
	} {
		res := s.call(c.tool, c.args)
		got := structured(t, res)
		e, _ := got["error"].(map[string]any)
		if !res.IsError || e["code"] != "ERR_NOT_CONFIGURED" || !strings.Contains(e["message"].(string), c.variable) {
			t.Fatalf("%s: %v", c.tool, got)
		}
		validateAgainst(t, w, tools[c.tool], got)
	}
	// A path outside the root is refused.
	res := s.call("vision_load_image", map[string]any{"path": "../../etc/passwd"})
	if e, _ := structured(t, res)["error"].(map[string]any); !res.IsError || e["code"] != "ERR_INVALID_INPUT" {
		t.Fatalf("escape: %v", structured(t, res))
	}
}

func TestVisionAndComputerEndToEnd(t *testing.T) {
	srv := xvfb.Start(t, 1024, 768)
	api := visiontest.New(t, "sk-e2e-key")
	w := newWorkspace(t)
	writePNG(t, w, "shots/red.png", color.RGBA{255, 0, 0, 255})
	s := w.serve(visionToolsets, "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL="+api.URL, "CAIRN_VISION_MODEL=e2e-model", "DISPLAY="+srv.Display)
	tools := s.tools()

	load := s.call("vision_load_image", map[string]any{"path": "shots/red.png"})
	id := structured(t, load)["imageId"]
	api.Push(visiontest.JSONReply(map[string]any{"description": "a red rectangle", "confidence": 0.8}))
	res := s.call("vision_analyze", map[string]any{"imageId": id, "analysisType": "general"})
	got := structured(t, res)
	if res.IsError || got["cached"] != false || got["result"].(map[string]any)["description"] != "a red rectangle" || got["model"] != "fake-model" {
		t.Fatalf("analyze: %v", got)
	}
	validateAgainst(t, w, tools["vision_analyze"], got)
	req := api.MessageRequests()[0]
	if req.Header.Get("X-Api-Key") != "sk-e2e-key" || req.Body["model"] != "e2e-model" {
		t.Fatalf("request %v %v", req.Header, req.Body["model"])
	}
	again := structured(t, s.call("vision_analyze", map[string]any{"imageId": id, "analysisType": "general"}))
	if again["cached"] != true || len(api.MessageRequests()) != 1 {
		t.Fatalf("cache: %v", again)
	}
	if strings.Contains(s.stderr.String(), "sk-e2e-key") {
		t.Fatal("the API key appeared in the logs")
	}

	start := s.call("computer_session_start", map[string]any{"maxActions": 10})
	st := structured(t, start)
	if start.IsError || metaStatus(start) != 201 || len(imageBlocks(start)) != 1 {
		t.Fatalf("start: %v", st)
	}
	validateAgainst(t, w, tools["computer_session_start"], st)
	shot := s.call("computer_action", map[string]any{"sessionId": st["sessionId"], "action": "screenshot"})
	imgs := imageBlocks(shot)
	if shot.IsError || len(imgs) != 1 || imgs[0].MIMEType != "image/png" {
		t.Fatalf("screenshot: %v", structured(t, shot))
	}
	raw, err := base64.StdEncoding.DecodeString(imgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != 1024 || cfg.Height != 768 {
		t.Fatalf("screenshot decodes to %+v, %v", cfg, err)
	}
	validateAgainst(t, w, tools["computer_action"], structured(t, shot))
	bad := s.call("computer_action", map[string]any{"sessionId": st["sessionId"], "action": "mouse_move", "params": map[string]any{"x": 5000, "y": 1}})
	if e, _ := structured(t, bad)["error"].(map[string]any); !bad.IsError || e["code"] != "ERR_INVALID_INPUT" {
		t.Fatalf("bad coordinate: %v", structured(t, bad))
	}
	end := s.call("computer_session_end", map[string]any{"sessionId": st["sessionId"]})
	if end.IsError || structured(t, end)["summary"].(map[string]any)["state"] != "ENDED" {
		t.Fatalf("end: %v", structured(t, end))
	}

	// The hosted-model loop through the host.
	api.Push(
		visiontest.ToolUseReply("", visiontest.ToolUse{ID: "u1", Input: map[string]any{"action": "screenshot"}}),
		visiontest.ToolUseReply("", visiontest.ToolUse{ID: "u2", Input: map[string]any{"action": "mouse_move", "coordinate": []any{10, 20}}}),
		visiontest.TextReply("All done."),
	)
	run := s.call("computer_agent_run", map[string]any{"task": "move the mouse to 10,20", "maxActions": 5})
	rg := structured(t, run)
	if run.IsError || rg["stopReason"] != "end_turn" || rg["actionsExecuted"] != float64(2) || rg["finalText"] != "All done." || rg["sessionEnded"] != true || len(imageBlocks(run)) != 1 {
		t.Fatalf("agent run: %v", rg)
	}
	validateAgainst(t, w, tools["computer_agent_run"], rg)
	calls := api.MessageRequests()
	last := calls[len(calls)-1]
	if !strings.Contains(last.Header.Get("Anthropic-Beta"), "computer-use-2025-11-24") || last.Body["tools"].([]any)[0].(map[string]any)["type"] != "computer_20251124" {
		t.Fatalf("beta request %v %v", last.Header, last.Body["tools"])
	}
}
