package vision

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
	"github.com/cairn-mcp/cairn/sdk/toolsnap"
)

func TestToolSnapshots(t *testing.T) {
	p := NewWithEnv(func(string) string { return "" })
	toolsnap.Check(t, p, "testdata/toolsnaps")
	toolsnap.CheckDerived(t, p, derivedSchemas, "schemas_derived.go", "derivedSchemas")
}

func plugin(t *testing.T, env map[string]string) (*sdk.Plugin, string) {
	t.Helper()
	root := t.TempDir()
	p := NewWithEnv(func(k string) string { return env[k] })
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: root}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	return p, root
}

func call(t *testing.T, p *sdk.Plugin, tool string, args any) sdk.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	return sdktest.Invoke(context.Background(), p, tool, b)
}

func TestToolsets(t *testing.T) {
	p, _ := plugin(t, nil)
	n := map[string]int{}
	for _, tl := range sdktest.Tools(p) {
		n[tl.Toolset]++
		if !strings.HasPrefix(tl.Name, tl.Toolset+"_") {
			t.Errorf("%s is in toolset %s", tl.Name, tl.Toolset)
		}
	}
	if n["vision"] < 10 || n["computer"] < 8 || len(n) != 2 {
		t.Fatalf("toolsets %v", n)
	}
}

func TestNotConfiguredErrors(t *testing.T) {
	p, root := plugin(t, nil)
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4)))
	if err := os.WriteFile(filepath.Join(root, "a.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Loading needs no key.
	res := call(t, p, "vision_load_image", map[string]any{"path": "a.png"})
	if res.Err != nil || res.Status != 201 {
		t.Fatalf("load: %+v", res.Err)
	}
	var im map[string]any
	_ = json.Unmarshal(res.Output, &im)
	cases := []struct {
		tool     string
		args     map[string]any
		variable string
	}{
		{"vision_analyze", map[string]any{"imageId": im["imageId"], "analysisType": "general"}, "ANTHROPIC_API_KEY"},
		{"vision_batch_analyze", map[string]any{"imageIds": []string{"x"}, "analysisType": "ocr"}, "ANTHROPIC_API_KEY"},
		{"vision_detect_objects", map[string]any{"imageId": "x"}, "ANTHROPIC_API_KEY"},
		{"computer_session_start", map[string]any{}, "DISPLAY"},
		{"computer_action", map[string]any{"sessionId": "cs_1", "action": "screenshot"}, "DISPLAY"},
		{"computer_agent_run", map[string]any{"task": "x"}, "ANTHROPIC_API_KEY"},
	}
	for _, c := range cases {
		r := call(t, p, c.tool, c.args)
		if r.Err == nil || r.Err.Code != "ERR_NOT_CONFIGURED" || r.Err.Details["variable"] != c.variable || !strings.Contains(r.Err.Message, c.variable) {
			t.Errorf("%s: %+v", c.tool, r.Err)
		}
	}
	if h := sdktest.Health(context.Background(), p); h.Status != "ok" {
		t.Fatalf("health without key or display should be ok: %+v", h)
	}
	bad := NewWithEnv(func(k string) string { return map[string]string{"CAIRN_VISION_TIMEOUT": "soon"}[k] })
	_ = sdktest.Configure(context.Background(), bad, sdk.Config{Root: root})
	if h := sdktest.Health(context.Background(), bad); h.Status != "degraded" || !strings.Contains(h.Message, "CAIRN_VISION_TIMEOUT") {
		t.Fatalf("bad setting: %+v", h)
	}
}

func TestPluginEndToEndInProcess(t *testing.T) {
	srv := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "k-1")
	p, root := plugin(t, map[string]string{"ANTHROPIC_API_KEY": "k-1", "ANTHROPIC_BASE_URL": api.URL, "DISPLAY": srv.Display})
	img := image.NewRGBA(image.Rect(0, 0, 10, 10))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	_ = os.WriteFile(filepath.Join(root, "b.png"), buf.Bytes(), 0o644)
	res := call(t, p, "vision_load_image", map[string]any{"path": "b.png"})
	var im map[string]any
	_ = json.Unmarshal(res.Output, &im)
	ids := []string{im["imageId"].(string)}
	for _, c := range []color.Gray{{10}, {90}} {
		g := image.NewGray(image.Rect(0, 0, 5, 5))
		for i := range g.Pix {
			g.Pix[i] = c.Y
		}
		var b bytes.Buffer
		_ = png.Encode(&b, g)
		r := call(t, p, "vision_load_image", map[string]any{"data": "data:image/png;base64," + encode64(b.Bytes())})
		var m map[string]any
		_ = json.Unmarshal(r.Output, &m)
		ids = append(ids, m["imageId"].(string))
	}
	api.Fallback = func(visiontest.Request) visiontest.Reply { return visiontest.JSONReply(map[string]any{"text": "ok"}) }
	var progress []float64
	ctx := sdk.WithProgress(context.Background(), func(done, total float64, _ string) { progress = append(progress, done) })
	b, _ := json.Marshal(map[string]any{"imageIds": ids, "analysisType": "ocr"})
	r := sdktest.Invoke(ctx, p, "vision_batch_analyze", b)
	if r.Err != nil || !strings.Contains(string(r.Output), `"completed":3`) || len(progress) != 3 {
		t.Fatalf("batch %s %+v progress %v", r.Output, r.Err, progress)
	}
	start := call(t, p, "computer_session_start", map[string]any{"maxActions": 2})
	if start.Err != nil || len(start.Content) != 1 || start.Content[0].Type != "image" {
		t.Fatalf("start %+v", start)
	}
	var st map[string]any
	_ = json.Unmarshal(start.Output, &st)
	if strings.Contains(string(start.Output), `"data"`) {
		t.Fatal("screenshot bytes duplicated in the JSON")
	}
	sid := st["sessionId"]
	shot := call(t, p, "computer_action", map[string]any{"sessionId": sid, "action": "screenshot"})
	if shot.Err != nil || len(shot.Content) != 1 || shot.Content[0].MIMEType != "image/png" {
		t.Fatalf("screenshot %+v", shot.Err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot.Content[0].Data))
	if err != nil || cfg.Width != 800 || cfg.Height != 600 {
		t.Fatalf("screenshot %+v %v", cfg, err)
	}
	if r := call(t, p, "computer_action", map[string]any{"sessionId": sid, "action": "mouse_move", "params": map[string]any{"x": 1, "y": 2}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := call(t, p, "computer_action", map[string]any{"sessionId": sid, "action": "mouse_move", "params": map[string]any{"x": 1, "y": 2}}); r.Err == nil || r.Err.Code != "ERR_LIMIT_EXCEEDED" || r.Status != 409 {
		t.Fatalf("third action: %+v", r.Err)
	}
	if r := call(t, p, "computer_action", map[string]any{"sessionId": "cs_nope", "action": "screenshot"}); r.Err == nil || r.Err.Code != "ERR_SESSION_NOT_FOUND" {
		t.Fatalf("unknown session: %+v", r.Err)
	}
	if r := call(t, p, "computer_session_start", map[string]any{"maxActions": 1001}); r.Err == nil || r.Err.Code != "ERR_INVALID_INPUT" {
		t.Fatalf("above the ceiling: %+v", r.Err)
	}
	end := call(t, p, "computer_session_end", map[string]any{"sessionId": sid})
	if end.Err != nil || len(end.Content) != 1 {
		t.Fatalf("end %+v", end.Err)
	}
}

func encode64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
