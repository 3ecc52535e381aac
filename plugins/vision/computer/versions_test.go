package computer

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestToolVersionActionSets(t *testing.T) {
	base := []string{"cursor_position", "double_click", "key", "left_click", "left_click_drag", "middle_click", "mouse_move", "right_click", "screenshot", "type"}
	v2 := append(slices.Clone(base), "hold_key", "left_mouse_down", "left_mouse_up", "scroll", "triple_click", "wait")
	v3 := append(slices.Clone(v2), "zoom")
	for _, c := range []struct {
		v    ToolVersion
		want []string
	}{{ToolVersion20241022, base}, {ToolVersion20250124, v2}, {ToolVersion20251124, v3}} {
		slices.Sort(c.want)
		if !slices.Equal(c.v.Actions, c.want) {
			t.Errorf("%s actions %v, want %v", c.v.ToolType, c.v.Actions, c.want)
		}
	}
	if DefaultToolVersion.ToolType != "computer_20251124" || DefaultToolVersion.Beta != "computer-use-2025-11-24" {
		t.Fatalf("default %+v", DefaultToolVersion)
	}
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"computer_20251124", "computer_20251124", true},
		{" computer_20250124 ", "computer_20250124", true},
		{"computer-use-2024-10-22", "computer_20241022", true},
		{"computer_20250124,computer-use-2025-01-24", "computer_20250124", true},
		{"computer_20250124,computer-use-2024-10-22", "", false},
		{"computer_20300101", "", false},
		{"", "", false},
	} {
		v, err := ParseToolVersion(c.in)
		if c.ok != (err == nil) || (c.ok && v.ToolType != c.want) {
			t.Errorf("ParseToolVersion(%q) = %s, %v", c.in, v.ToolType, err)
		}
		if err != nil {
			if e := errs.From(err); e.Code != errs.InvalidInput || !strings.Contains(e.Message, "computer_20251124") {
				t.Errorf("ParseToolVersion(%q) error %v", c.in, err)
			}
		}
	}
}

func TestBetaValidationPerVersion(t *testing.T) {
	v1, v2, v3 := ToolVersion20241022, ToolVersion20250124, ToolVersion20251124
	xy := []any{10.0, 20.0}
	cases := []struct {
		v      ToolVersion
		action string
		params map[string]any
		valid  bool
	}{
		{v1, "left_click", map[string]any{}, true},
		{v1, "left_click", map[string]any{"coordinate": xy}, false},
		{v1, "scroll", map[string]any{"scroll_direction": "up"}, false},
		{v1, "triple_click", map[string]any{}, false},
		{v1, "zoom", map[string]any{"region": []any{0.0, 0.0, 10.0, 10.0}}, false},
		{v2, "left_click", map[string]any{"coordinate": xy, "text": "shift"}, true},
		{v2, "triple_click", map[string]any{"coordinate": xy}, true},
		{v2, "left_click_drag", map[string]any{"start_coordinate": xy, "coordinate": xy}, true},
		{v2, "left_click_drag", map[string]any{"start_coordinate": []any{1.0}, "coordinate": xy}, false},
		{v2, "left_mouse_down", map[string]any{}, true},
		{v2, "left_mouse_up", map[string]any{"coordinate": xy}, true},
		{v2, "hold_key", map[string]any{"text": "shift", "duration": 0.5}, true},
		{v2, "hold_key", map[string]any{"text": "shift"}, false},
		{v2, "hold_key", map[string]any{"text": "shift", "duration": 61.0}, false},
		{v2, "hold_key", map[string]any{"text": "shift", "duration": -1.0}, false},
		{v2, "wait", map[string]any{"duration": 1.0}, true},
		{v2, "wait", map[string]any{"duration": "1"}, false},
		{v2, "wait", map[string]any{}, false},
		{v2, "zoom", map[string]any{"region": []any{0.0, 0.0, 10.0, 10.0}}, false},
		{v3, "zoom", map[string]any{"region": []any{0.0, 0.0, 10.0, 10.0}}, true},
		{v3, "zoom", map[string]any{"region": []any{10.0, 0.0, 10.0, 10.0}}, false},
		{v3, "zoom", map[string]any{"region": []any{0.0, 0.0, 10.0}}, false},
		{v3, "zoom", map[string]any{}, false},
		{v3, "hover", map[string]any{}, false},
	}
	for _, c := range cases {
		v := ValidateBetaActionParams(c.v, c.action, c.params)
		if v.Valid != c.valid || v.Valid == (len(v.Errors) > 0) {
			t.Errorf("%s %s %v: %+v", c.v.ToolType, c.action, c.params, v)
		}
	}
	// The refusal names the action, the version and where the action is.
	v := ValidateBetaActionParams(v1, "scroll", map[string]any{"scroll_direction": "up"})
	if msg := strings.Join(v.Errors, ";"); !strings.Contains(msg, `"scroll" is not available in computer_20241022`) || !strings.Contains(msg, "computer_20250124 or later") {
		t.Fatalf("refusal %q", msg)
	}
	typ, p, err := ConvertBetaToInternal(v3, "hold_key", map[string]any{"text": "ctrl", "duration": 0.25})
	if err != nil || typ != "hold_key" || p["key"] != "ctrl" || p["durationMs"] != 250 {
		t.Fatalf("hold_key: %v %v %v", typ, p, err)
	}
	typ, p, err = ConvertBetaToInternal(v3, "left_click_drag", map[string]any{"start_coordinate": xy, "coordinate": []any{30.0, 40.0}, "text": "shift"})
	if err != nil || p["startX"] != 10 || p["startY"] != 20 || p["x"] != 30 || p["modifiers"] != "shift" {
		t.Fatalf("drag: %v %v %v", typ, p, err)
	}
	if _, _, err := ParseActionParams(typ, p, 100, 100); err != nil {
		t.Fatalf("converted drag does not validate: %v", err)
	}
	typ, p, _ = ConvertBetaToInternal(v3, "zoom", map[string]any{"region": []any{1.0, 2.0, 30.0, 40.0}})
	if _, pp, err := ParseActionParams(typ, p, 100, 100); err != nil || !slices.Equal(pp.Region, []int{1, 2, 30, 40}) {
		t.Fatalf("zoom: %v %v", pp, err)
	}
}

func TestParseNewActionParams(t *testing.T) {
	cases := []struct {
		action     string
		params     map[string]any
		field      string
		constraint string
	}{
		{"triple_click", map[string]any{"x": 1, "y": 2, "modifiers": "shift"}, "", ""},
		{"left_click", map[string]any{"modifiers": "ctrl+shift"}, "", ""},
		{"left_click", map[string]any{"modifiers": "ctrl shift"}, "params.modifiers", "format"},
		{"left_click", map[string]any{"modifiers": "hyperdrive"}, "params.modifiers", "keysym"},
		{"left_click", map[string]any{"modifiers": 3}, "params.modifiers", "type"},
		{"left_click_drag", map[string]any{"x": 1, "y": 2, "startX": 3}, "params.startY", "dependentRequired"},
		{"left_click_drag", map[string]any{"x": 1, "y": 2, "startX": 3, "startY": 500}, "params.startY", "maximum"},
		{"left_mouse_down", map[string]any{}, "", ""},
		{"left_mouse_up", map[string]any{"x": 1, "y": 1}, "", ""},
		{"left_mouse_down", map[string]any{"modifiers": "shift"}, "params.modifiers", "additionalProperties"},
		{"hold_key", map[string]any{"key": "shift", "durationMs": 100}, "", ""},
		{"hold_key", map[string]any{"key": "shift"}, "params.durationMs", "required"},
		{"hold_key", map[string]any{"key": "a b", "durationMs": 1}, "params.key", "format"},
		{"hold_key", map[string]any{"key": "a", "durationMs": MaxWaitTimeMs + 1}, "params.durationMs", "maximum"},
		{"wait", map[string]any{"durationMs": 0}, "", ""},
		{"wait", map[string]any{"durationMs": -1}, "params.durationMs", "maximum"},
		{"wait", map[string]any{"durationMs": 1.5}, "params.durationMs", "type"},
		{"zoom", map[string]any{"region": []any{0, 0, 100, 100}}, "", ""},
		{"zoom", map[string]any{"region": []any{0, 0, 101, 100}}, "params.region", "maximum"},
		{"zoom", map[string]any{"region": []any{5, 5, 5, 9}}, "params.region", "format"},
		{"zoom", map[string]any{}, "params.region", "required"},
		{"scroll", map[string]any{"direction": "down", "modifiers": "shift"}, "", ""},
	}
	for _, c := range cases {
		_, _, err := ParseActionParams(c.action, c.params, 100, 100)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s %v: %v", c.action, c.params, err)
			}
			continue
		}
		e := errs.From(err)
		if err == nil || e.Status != 400 || e.Details["field"] != c.field || e.Details["constraint"] != c.constraint {
			t.Errorf("%s %v: got %v %v, want %s/%s", c.action, c.params, err, e.Details, c.field, c.constraint)
		}
	}
}

// xev is one input event the test window saw.
type xev struct {
	kind   string // KP KR BP BR
	detail uint32 // keysym for keys, button for buttons
	x, y   int    // buttons only; -1 means "do not check"
	shift  bool   // Shift held (buttons only)
}

// inputEvents reads exactly n input events from the window, in order.
func (w *testWindow) inputEvents(n int) []xev {
	var out []xev
	for len(out) < n {
		switch ev := w.next().(type) {
		case xproto.KeyPressEvent:
			out = append(out, xev{kind: "KP", detail: uint32(w.keysym(ev)), x: -1, y: -1})
		case xproto.KeyReleaseEvent:
			out = append(out, xev{kind: "KR", detail: uint32(w.keysym(xproto.KeyPressEvent(ev))), x: -1, y: -1})
		case xproto.ButtonPressEvent:
			out = append(out, xev{kind: "BP", detail: uint32(ev.Detail), x: int(ev.EventX), y: int(ev.EventY), shift: ev.State&xproto.ModMaskShift != 0})
		case xproto.ButtonReleaseEvent:
			out = append(out, xev{kind: "BR", detail: uint32(ev.Detail), x: int(ev.EventX), y: int(ev.EventY), shift: ev.State&xproto.ModMaskShift != 0})
		}
	}
	return out
}

func (e xev) matches(want xev) bool {
	if e.kind != want.kind || e.detail != want.detail || e.shift != want.shift {
		return false
	}
	return want.x < 0 || (e.x == want.x && e.y == want.y)
}

func bp(b uint32, x, y int) xev { return xev{kind: "BP", detail: b, x: x, y: y} }
func br(b uint32, x, y int) xev { return xev{kind: "BR", detail: b, x: x, y: y} }
func kp(ks uint32) xev          { return xev{kind: "KP", detail: ks, x: -1, y: -1} }
func kr(ks uint32) xev          { return xev{kind: "KR", detail: ks, x: -1, y: -1} }
func shifted(e xev) xev         { e.shift = true; return e }

// agentStep is one computer-tool request of the scripted model and what it
// must do on the screen.
type agentStep struct {
	input map[string]any
	// events the window must see, in order.
	events []xev
	// image: the tool result is an image (screenshot, zoom).
	image bool
	// text the tool result must contain.
	text string
	// since is the index in ToolVersions() of the first version that
	// accepts the request (its action, or its fields).
	since int
}

const (
	shiftL = 0xffe1
	ctrlL  = 0xffe3
)

// everyAction is a script that uses every action of every version; each
// version runs the steps it defines and must refuse the others.
func everyAction() []agentStep {
	c := func(x, y int) []any { return []any{x, y} }
	a := func(m map[string]any, action string) map[string]any { m["action"] = action; return m }
	return []agentStep{
		{input: a(map[string]any{}, "screenshot"), image: true},
		{input: a(map[string]any{"coordinate": c(100, 150)}, "mouse_move"), text: "cursor at 100,150"},
		{input: a(map[string]any{}, "cursor_position"), text: "X=100,Y=150"},
		{input: a(map[string]any{}, "left_click"), events: []xev{bp(1, 100, 150), br(1, 100, 150)}},
		{input: a(map[string]any{}, "right_click"), events: []xev{bp(3, 100, 150), br(3, 100, 150)}},
		{input: a(map[string]any{}, "middle_click"), events: []xev{bp(2, 100, 150), br(2, 100, 150)}},
		{input: a(map[string]any{}, "double_click"), events: []xev{bp(1, 100, 150), br(1, 100, 150), bp(1, 100, 150), br(1, 100, 150)}},
		{input: a(map[string]any{"coordinate": c(300, 200)}, "left_click_drag"), events: []xev{bp(1, 100, 150), br(1, 300, 200)}},
		{input: a(map[string]any{"text": "hi"}, "type"), events: []xev{kp('h'), kr('h'), kp('i'), kr('i')}},
		{input: a(map[string]any{"text": "ctrl+a"}, "key"), events: []xev{kp(ctrlL), kp('a'), kr('a'), kr(ctrlL)}},
		// computer_20250124 and later.
		{input: a(map[string]any{"coordinate": c(20, 30)}, "left_click"), events: []xev{bp(1, 20, 30), br(1, 20, 30)}, since: 1},
		{input: a(map[string]any{"coordinate": c(40, 50), "text": "shift"}, "left_click"), events: []xev{kp(shiftL), shifted(bp(1, 40, 50)), shifted(br(1, 40, 50)), kr(shiftL)}, since: 1},
		{input: a(map[string]any{"coordinate": c(60, 70)}, "triple_click"), events: []xev{bp(1, 60, 70), br(1, 60, 70), bp(1, 60, 70), br(1, 60, 70), bp(1, 60, 70), br(1, 60, 70)}, since: 1},
		{input: a(map[string]any{"start_coordinate": c(10, 10), "coordinate": c(200, 220)}, "left_click_drag"), events: []xev{bp(1, 10, 10), br(1, 200, 220)}, since: 1},
		{input: a(map[string]any{"coordinate": c(500, 400)}, "left_mouse_down"), events: []xev{bp(1, 500, 400)}, since: 1},
		{input: a(map[string]any{"coordinate": c(520, 410)}, "mouse_move"), text: "cursor at 520,410"},
		{input: a(map[string]any{"coordinate": c(540, 420)}, "left_mouse_up"), events: []xev{br(1, 540, 420)}, since: 1},
		{input: a(map[string]any{"scroll_direction": "down", "scroll_amount": 2, "coordinate": c(400, 300)}, "scroll"), events: []xev{bp(5, 400, 300), br(5, 400, 300), bp(5, 400, 300), br(5, 400, 300)}, since: 1},
		{input: a(map[string]any{"scroll_direction": "left", "scroll_amount": 1, "text": "shift"}, "scroll"), events: []xev{kp(shiftL), shifted(bp(6, 400, 300)), shifted(br(6, 400, 300)), kr(shiftL)}, since: 1},
		{input: a(map[string]any{"text": "shift", "duration": 0.05}, "hold_key"), events: []xev{kp(shiftL), kr(shiftL)}, text: "held shift for 50 ms", since: 1},
		{input: a(map[string]any{"duration": 0.01}, "wait"), text: "waited 10 ms", since: 1},
		// computer_20251124.
		{input: a(map[string]any{"region": c4(0, 0, 64, 40)}, "zoom"), image: true, since: 2},
	}
}

func c4(a, b, c, d int) []any { return []any{a, b, c, d} }

// TestAgentDrivesEveryActionOfEachVersion drives the agent loop with a
// scripted model on a real Xvfb for each tool version: every action the
// version defines is executed and seen by an X client; every action it
// does not define comes back to the model as an error tool_result naming
// the action and the version; each request carries the version's tool type
// and beta header.
func TestAgentDrivesEveryActionOfEachVersion(t *testing.T) {
	for _, v := range ToolVersions() {
		t.Run(v.ToolType, func(t *testing.T) {
			d, win := startX(t)
			win.fill(0, 0, 64, 40, 0xff0000) // red in the zoomed corner
			api := visiontest.New(t, testKey)
			api.Betas = []string{v.Beta}
			bc := NewBetaClient(imaging.Config{APIKey: testKey, BaseURL: api.URL, Model: "test-model", MaxRetries: 0, RequestTimeout: 20 * time.Second}, v)
			f := false
			s, err := NewSession(SessionConfig{CaptureScreenshots: &f}, d, WithBetaCheck(bc.CheckAvailable))
			if err != nil {
				t.Fatal(err)
			}
			if res, err := s.Start(context.Background()); err != nil || res.BetaAvailable == nil || !*res.BetaAvailable {
				t.Fatalf("start %+v %v", res, err)
			}
			steps := everyAction()
			// An action no version defines is refused like the others.
			steps = append(steps, agentStep{input: map[string]any{"action": "hover", "coordinate": []any{1, 1}}, since: len(ToolVersions())})
			for i, st := range steps {
				api.Push(visiontest.ToolUseReply("", visiontest.ToolUse{ID: fmt.Sprintf("t%d", i), Input: st.input}))
			}
			api.Push(visiontest.TextReply("done"))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := bc.RunAgent(ctx, s, AgentOptions{Task: "exercise every action", MaxTurns: len(steps) + 1})
			if err != nil {
				t.Fatal(err)
			}
			reqs := api.MessageRequests()
			if res.StopReason != "end_turn" || len(reqs) != len(steps)+1 {
				t.Fatalf("run %+v, %d requests", res, len(reqs))
			}
			for _, r := range reqs {
				def := r.Body["tools"].([]any)[0].(map[string]any)
				_, zoomFlag := def["enable_zoom"]
				if r.Header.Get("Anthropic-Beta") != v.Beta || def["type"] != v.ToolType || zoomFlag != v.Allows("zoom") || def["display_width_px"] != float64(screenW) {
					t.Fatalf("request header %q, tool %v", r.Header.Get("Anthropic-Beta"), def)
				}
			}
			executed, refused := 0, 0
			var wantEvents []xev
			for i, st := range steps {
				action := st.input["action"].(string)
				msgs := reqs[i+1].Body["messages"].([]any)
				tr := msgs[len(msgs)-1].(map[string]any)["content"].([]any)[0].(map[string]any)
				if tr["tool_use_id"] != fmt.Sprintf("t%d", i) {
					t.Fatalf("step %d answered %v", i, tr)
				}
				content := tr["content"].([]any)[0].(map[string]any)
				if slices.IndexFunc(ToolVersions(), func(x ToolVersion) bool { return x.ToolType == v.ToolType }) < st.since {
					refused++
					if tr["is_error"] != true || content["type"] != "text" {
						t.Fatalf("step %d (%s) not refused: %v", i, action, tr)
					}
					if txt := content["text"].(string); !strings.Contains(txt, action) || (!v.Allows(action) && !strings.Contains(txt, "not available in "+v.ToolType)) {
						t.Fatalf("step %d (%s) refusal text %q", i, action, txt)
					}
					continue
				}
				if action != CursorPosition {
					executed++
				}
				if tr["is_error"] == true {
					t.Fatalf("step %d (%s) failed: %v", i, action, tr)
				}
				if st.image {
					checkImageResult(t, action, content)
				} else if txt, _ := content["text"].(string); !strings.Contains(txt, st.text) {
					t.Fatalf("step %d (%s) answered %q, want %q", i, action, txt, st.text)
				}
				wantEvents = append(wantEvents, st.events...)
			}
			if res.ActionsExecuted != executed || res.ActionsRefused != refused+1 { // +1: cursor_position executes nothing
				t.Fatalf("executed %d refused %d, want %d and %d", res.ActionsExecuted, res.ActionsRefused, executed, refused+1)
			}
			got := win.inputEvents(len(wantEvents))
			for i := range wantEvents {
				if !got[i].matches(wantEvents[i]) {
					t.Fatalf("event %d: got %+v, want %+v\nall: %+v", i, got[i], wantEvents[i], got)
				}
			}
			// A sentinel key must be the very next event: refused requests
			// reached nothing on the screen.
			if err := d.Keys([]KeyChord{{0xffc9}}); err != nil {
				t.Fatal(err)
			}
			if e := win.inputEvents(1)[0]; !e.matches(kp(0xffc9)) {
				t.Fatalf("stray event after the run: %+v", e)
			}
			if sum := s.GetSummary(); sum.ActionCount != executed || sum.ErrorCount != 0 {
				t.Fatalf("summary %+v", sum)
			}
		})
	}
}

// fill paints a rectangle of the test window in colour rgb.
func (w *testWindow) fill(x, y, width, height int, rgb uint32) {
	w.t.Helper()
	gc, err := xproto.NewGcontextId(w.conn)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := xproto.CreateGCChecked(w.conn, gc, xproto.Drawable(w.win), xproto.GcForeground, []uint32{rgb}).Check(); err != nil {
		w.t.Fatal(err)
	}
	if err := xproto.PolyFillRectangleChecked(w.conn, xproto.Drawable(w.win), gc, []xproto.Rectangle{{X: int16(x), Y: int16(y), Width: uint16(width), Height: uint16(height)}}).Check(); err != nil {
		w.t.Fatal(err)
	}
}

// checkImageResult decodes an image tool result; a zoom of the red
// 64×40 corner must be enlarged to the display's 1280×800 and red.
func checkImageResult(t *testing.T, action string, content map[string]any) {
	t.Helper()
	src := content["source"].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(src["data"].(string))
	if err != nil || content["type"] != "image" || src["media_type"] != "image/png" {
		t.Fatalf("%s result %v", action, content["type"])
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != screenW || b.Dy() != screenH {
		t.Fatalf("%s image %v", action, b)
	}
	r, g, _, _ := img.At(screenW/2, screenH/2).RGBA()
	if action == "zoom" && (r>>8 != 0xff || g>>8 != 0) {
		t.Fatalf("zoom centre %x %x, want the red corner", r>>8, g>>8)
	}
	if action == "screenshot" && (r>>8 != 0 || g>>8 != 0xff) {
		t.Fatalf("screenshot centre %x %x, want the green window", r>>8, g>>8)
	}
}

func TestZoomScalesTheRegion(t *testing.T) {
	d, win := startX(t)
	win.fill(100, 100, 32, 20, 0x0000ff)
	s, err := NewSession(SessionConfig{DisplayWidth: 640, DisplayHeight: 400, MaxScreenshots: 1}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Session coordinates are half the screen's: 50,50-66,60 is the blue
	// 32×20 rectangle at 100,100 on the screen.
	r := act(t, s, "zoom", map[string]any{"region": []any{50, 50, 66, 60}})
	img, err := png.Decode(bytes.NewReader(r.Screenshot.Data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 400 || r.Screenshot.Width != 640 {
		t.Fatalf("zoom size %v", b)
	}
	if _, g, b, _ := img.At(320, 200).RGBA(); b>>8 != 0xff || g != 0 {
		t.Fatalf("zoom centre is not the blue rectangle")
	}
	// A zoom is a screenshot for maxScreenshots.
	if _, err := s.ExecuteAction(context.Background(), "zoom", map[string]any{"region": []any{0, 0, 10, 10}}); errs.From(err).Details["limit"] != "maxScreenshots" {
		t.Fatalf("second zoom: %v", err)
	}
}

func TestLeftMouseDownIsReleasedAtEnd(t *testing.T) {
	d, win := startX(t)
	f := false
	s, _ := NewSession(SessionConfig{CaptureScreenshots: &f}, d)
	if _, err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	act(t, s, "left_mouse_down", map[string]any{"x": 5, "y": 6})
	if _, err := s.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := win.inputEvents(2)
	if !got[0].matches(bp(1, 5, 6)) || !got[1].matches(br(1, 5, 6)) {
		t.Fatalf("events %+v", got)
	}
}

func TestStartChecksTheHostedModel(t *testing.T) {
	d, _ := startX(t)
	api := visiontest.New(t, testKey)
	api.Models = []string{"claude-sonnet-5-5"}
	cfg := imaging.Config{APIKey: testKey, BaseURL: api.URL, MaxRetries: 0, RequestTimeout: 10 * time.Second}
	f := false
	cases := []struct {
		name    string
		client  *BetaClient
		code    string
		contain string
	}{
		{"default model and version", NewBetaClient(cfg, ToolVersion{}), "", ""},
		{"no key", NewBetaClient(imaging.Config{BaseURL: api.URL}, ToolVersion{}), errs.NotConfigured, "ANTHROPIC_API_KEY"},
		{"unknown model", NewBetaClient(imaging.Config{APIKey: testKey, BaseURL: api.URL, Model: "claude-gone-1", MaxRetries: 0}, ToolVersion{}), "ERR_UPSTREAM_FAILED", "claude-gone-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := NewSession(SessionConfig{CaptureScreenshots: &f}, d, WithBetaCheck(c.client.CheckAvailable))
			res, err := s.Start(context.Background())
			if c.code == "" {
				if err != nil || res.BetaAvailable == nil || !*res.BetaAvailable {
					t.Fatalf("start %+v %v", res, err)
				}
				return
			}
			if e := errs.From(err); err == nil || e.Code != c.code || !strings.Contains(e.Message, c.contain) || s.State() != Idle {
				t.Fatalf("start: %v (state %s)", err, s.State())
			}
		})
	}
	// The check asks the models endpoint for the default model with the
	// default version's beta header.
	var got []visiontest.Request
	for _, r := range api.Requests() {
		if r.Method == "GET" {
			got = append(got, r)
		}
	}
	if len(got) != 2 || got[0].Path != "/v1/models/claude-sonnet-5-5" || got[0].Header.Get("Anthropic-Beta") != "computer-use-2025-11-24" {
		t.Fatalf("availability requests %+v", got)
	}
}
