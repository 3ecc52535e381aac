package computer

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestParseActionParamsRules(t *testing.T) {
	long := strings.Repeat("a", MaxTextLength+1)
	cases := []struct {
		name   string
		action string
		params map[string]any
		field  string // "" means valid
		constr string
	}{
		{"screenshot", "screenshot", nil, "", ""},
		{"screenshot extra", "screenshot", map[string]any{"x": 1}, "params.x", "additionalProperties"},
		{"unknown action", "teleport", nil, "action", "enum"},
		{"move", "mouse_move", map[string]any{"x": 0.0, "y": 99.0}, "", ""},
		{"move missing y", "mouse_move", map[string]any{"x": 1}, "params.y", "required"},
		{"move fractional", "mouse_move", map[string]any{"x": 1.5, "y": 1}, "params.x", "type"},
		{"move string", "mouse_move", map[string]any{"x": "1", "y": 1}, "params.x", "type"},
		{"move negative", "mouse_move", map[string]any{"x": -1, "y": 1}, "params.x", "minimum"},
		{"move off display", "mouse_move", map[string]any{"x": 100, "y": 1}, "params.x", "maximum"},
		{"move above maxCoordinate", "mouse_move", map[string]any{"x": 1, "y": 5000}, "params.y", "maximum"},
		{"click at cursor", "left_click", nil, "", ""},
		{"click x only", "right_click", map[string]any{"x": 3}, "params.y", "dependentRequired"},
		{"double click at", "double_click", map[string]any{"x": 3, "y": 4}, "", ""},
		{"drag needs target", "left_click_drag", nil, "params.x", "required"},
		{"type", "type", map[string]any{"text": "héllo\nworld"}, "", ""},
		{"type empty", "type", map[string]any{"text": ""}, "params.text", "minLength"},
		{"type too long", "type", map[string]any{"text": long}, "params.text", "maxLength"},
		{"type control char", "type", map[string]any{"text": "a\x07"}, "params.text", "pattern"},
		{"type number", "type", map[string]any{"text": 5}, "params.text", "type"},
		{"key", "key", map[string]any{"key": "ctrl+shift+t"}, "", ""},
		{"key unknown", "key", map[string]any{"key": "hyperdrive"}, "params.key", "keysym"},
		{"key empty", "key", map[string]any{"key": " "}, "params.key", "minLength"},
		{"key dangling plus", "key", map[string]any{"key": "ctrl+"}, "params.key", "format"},
		{"scroll", "scroll", map[string]any{"direction": "down"}, "", ""},
		{"scroll bad direction", "scroll", map[string]any{"direction": "sideways"}, "params.direction", "enum"},
		{"scroll amount 0", "scroll", map[string]any{"direction": "up", "amount": 0}, "params.amount", "maximum"},
		{"scroll amount big", "scroll", map[string]any{"direction": "up", "amount": MaxScrollAmount + 1}, "params.amount", "maximum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseActionParams(c.action, c.params, 100, 100)
			if c.field == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e := errs.From(err)
			if err == nil || e.Code != errs.InvalidInput || e.Details["field"] != c.field || e.Details["constraint"] != c.constr {
				t.Fatalf("got %v %v, want %s/%s", err, e.Details, c.field, c.constr)
			}
		})
	}
}

func TestParseKeySpec(t *testing.T) {
	cases := []struct {
		spec string
		want [][]Keysym
	}{
		{"Return", [][]Keysym{{0xff0d}}},
		{"ctrl+c", [][]Keysym{{0xffe3, 'c'}}},
		{"super", [][]Keysym{{0xffeb}}},
		{"F1 F12", [][]Keysym{{0xffbe}, {0xffc9}}},
		{"alt+Tab", [][]Keysym{{0xffe9, 0xff09}}},
		{"ctrl++", [][]Keysym{{0xffe3, '+'}}},
		{"KP_Enter", [][]Keysym{{0xff8d}}},
		{"Page_Down", [][]Keysym{{0xff56}}},
		{"enter", [][]Keysym{{0xff0d}}},
		{"A", [][]Keysym{{'A'}}},
		{"é", [][]Keysym{{0xe9}}},
		{"€", [][]Keysym{{0x010020ac}}},
		{"0xff0d", [][]Keysym{{0xff0d}}},
		{"XF86AudioMute", [][]Keysym{{0x1008ff12}}},
	}
	for _, c := range cases {
		got, err := ParseKeySpec(c.spec)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.spec, got, err)
			continue
		}
		for i := range got {
			if len(got[i]) != len(c.want[i]) {
				t.Errorf("%q: %v", c.spec, got)
				continue
			}
			for j := range got[i] {
				if got[i][j] != c.want[i][j] {
					t.Errorf("%q: %v, want %v", c.spec, got, c.want)
				}
			}
		}
	}
	for _, bad := range []string{"", "ctrl+", "+ctrl", "nope", strings.Repeat("a ", 200), "a+b+c+d+e+f+g+h+i"} {
		if _, err := ParseKeySpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSessionConfigCeilings(t *testing.T) {
	cases := []struct {
		name  string
		cfg   SessionConfig
		field string
	}{
		{"maxActions above ceiling", SessionConfig{MaxActions: MaxActionsCeiling + 1}, "maxActions"},
		{"maxDurationMs above ceiling", SessionConfig{MaxDurationMs: MaxDurationMsCeiling + 1}, "maxDurationMs"},
		{"maxScreenshots above ceiling", SessionConfig{MaxScreenshots: MaxScreenshotsCeiling + 1}, "maxScreenshots"},
		{"width above maxCoordinate", SessionConfig{DisplayWidth: MaxCoordinate + 1}, "displayWidth"},
		{"negative height", SessionConfig{DisplayHeight: -5}, "displayHeight"},
		{"negative actions", SessionConfig{MaxActions: -1}, "maxActions"},
		{"long description", SessionConfig{Description: strings.Repeat("d", MaxDescriptionLength+1)}, "description"},
	}
	for _, c := range cases {
		_, err := c.cfg.Resolve(0, 0)
		if e := errs.From(err); err == nil || e.Details["field"] != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	got, err := SessionConfig{MaxActions: MaxActionsCeiling, MaxDurationMs: MaxDurationMsCeiling, MaxScreenshots: MaxScreenshotsCeiling}.Resolve(0, 0)
	if err != nil || got.MaxActions != 1000 {
		t.Fatalf("ceilings themselves are allowed: %v", err)
	}
	d, _ := SessionConfig{}.Resolve(0, 0)
	if d.DisplayWidth != 1920 || d.DisplayHeight != 1080 || d.MaxActions != 100 || d.MaxDurationMs != 300000 || d.MaxScreenshots != 50 || !d.Capture() || d.AutoPauseOnError {
		t.Fatalf("defaults %+v", d)
	}
	if d, _ := (SessionConfig{}).Resolve(1280, 800); d.DisplayWidth != 1280 || d.DisplayHeight != 800 {
		t.Fatalf("display size not adopted: %+v", d)
	}
}

func TestBetaValidationAndConversion(t *testing.T) {
	cases := []struct {
		action string
		params map[string]any
		valid  bool
	}{
		{"screenshot", map[string]any{}, true},
		{"cursor_position", map[string]any{"action": "cursor_position"}, true},
		{"mouse_move", map[string]any{"coordinate": []any{1.0, 2.0}}, true},
		{"mouse_move", map[string]any{}, false},
		{"mouse_move", map[string]any{"coordinate": []any{1.0}}, false},
		{"mouse_move", map[string]any{"coordinate": []any{1.5, 2.0}}, false},
		{"left_click", map[string]any{}, true},
		{"left_click", map[string]any{"text": ""}, false},
		{"type", map[string]any{"text": "hi"}, true},
		{"type", map[string]any{"text": ""}, false},
		{"type", map[string]any{"text": 3.0}, false},
		{"key", map[string]any{"text": "Return"}, true},
		{"key", map[string]any{}, false},
		{"scroll", map[string]any{"scroll_direction": "down", "scroll_amount": 2.0, "coordinate": []any{5.0, 5.0}}, true},
		{"scroll", map[string]any{"scroll_direction": "diagonal"}, false},
		{"zoom", map[string]any{}, false},
	}
	for _, c := range cases {
		if v := ValidateBetaActionParams(ToolVersion20250124, c.action, c.params); v.Valid != c.valid || (v.Valid == (len(v.Errors) > 0)) {
			t.Errorf("%s %v: %+v", c.action, c.params, v)
		}
	}
	typ, p, err := ConvertBetaToInternal(ToolVersion20250124, "mouse_move", map[string]any{"coordinate": []any{10.0, 20.0}})
	if err != nil || typ != "mouse_move" || p["x"] != 10 || p["y"] != 20 {
		t.Fatalf("mouse_move: %v %v %v", typ, p, err)
	}
	if _, _, err := ParseActionParams(typ, p, 100, 100); err != nil {
		t.Fatalf("converted params do not validate: %v", err)
	}
	typ, p, _ = ConvertBetaToInternal(ToolVersion20250124, "key", map[string]any{"text": "ctrl+a"})
	if typ != "key" || p["key"] != "ctrl+a" {
		t.Fatalf("key: %v %v", typ, p)
	}
	typ, p, _ = ConvertBetaToInternal(ToolVersion20250124, "scroll", map[string]any{"scroll_direction": "up", "scroll_amount": 4.0})
	if typ != "scroll" || p["direction"] != "up" || p["amount"] != 4.0 {
		t.Fatalf("scroll: %v %v", typ, p)
	}
	if typ, _, _ := ConvertBetaToInternal(ToolVersion20250124, "cursor_position", nil); typ != CursorPosition {
		t.Fatal(typ)
	}
	if _, _, err := ConvertBetaToInternal(ToolVersion20250124, "zoom", nil); code(err) != errs.InvalidInput {
		t.Fatal(err)
	}
	defs := GetBetaToolDefinitions(ToolVersion20241022, 1024, 768, nil)
	b, _ := json.Marshal(defs)
	if string(b) != `[{"type":"computer_20241022","name":"computer","display_width_px":1024,"display_height_px":768}]` {
		t.Fatalf("definitions %s", b)
	}
	b, _ = json.Marshal(GetBetaToolDefinitions(ToolVersion20251124, 1280, 800, nil))
	if string(b) != `[{"type":"computer_20251124","name":"computer","display_width_px":1280,"display_height_px":800,"enable_zoom":true}]` {
		t.Fatalf("definitions %s", b)
	}
}

// fakeDriver records calls in memory, for the state machine.
type fakeDriver struct {
	fail error
	x, y int
	// held, when set, is told each time a chord is pressed by Hold.
	held     chan KeyChord
	released []KeyChord
}

func (f *fakeDriver) Size() (int, int) { return 100, 100 }
func (f *fakeDriver) Capture() (*image.RGBA, error) {
	return image.NewRGBA(image.Rect(0, 0, 100, 100)), f.fail
}
func (f *fakeDriver) MoveMouse(x, y int) error {
	f.x, f.y = x, y
	return f.fail
}
func (f *fakeDriver) Click(Button, int) error   { return f.fail }
func (f *fakeDriver) Drag(int, int) error       { return f.fail }
func (f *fakeDriver) Keys([]KeyChord) error     { return f.fail }
func (f *fakeDriver) TypeText(string) error     { return f.fail }
func (f *fakeDriver) Cursor() (int, int, error) { return f.x, f.y, nil }
func (f *fakeDriver) Close() error              { return nil }
func (f *fakeDriver) Button(Button, bool) error { return f.fail }
func (f *fakeDriver) Hold(c KeyChord, press bool) error {
	if press && f.held != nil {
		f.held <- c
	}
	if !press {
		f.released = append(f.released, c)
	}
	return f.fail
}

func TestSessionStates(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	drv := &fakeDriver{}
	s, err := NewSession(SessionConfig{MaxDurationMs: 1000}, drv, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	mv := map[string]any{"x": 1, "y": 1}
	if _, err := s.ExecuteAction(ctx, "mouse_move", mv); code(err) != errs.InvalidTransition {
		t.Fatalf("IDLE action: %v", err)
	}
	if err := s.Pause(); code(err) != errs.InvalidTransition {
		t.Fatal("paused an IDLE session")
	}
	if _, err := s.Start(ctx); err != nil || s.State() != Active {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx); code(err) != errs.InvalidTransition {
		t.Fatal("started twice")
	}
	now = now.Add(400 * time.Millisecond)
	if err := s.Pause(); err != nil || s.State() != Paused {
		t.Fatal(err)
	}
	if _, err := s.ExecuteAction(ctx, "mouse_move", mv); code(err) != errs.InvalidTransition {
		t.Fatalf("PAUSED action: %v", err)
	}
	now = now.Add(time.Hour) // paused time does not count
	if err := s.Resume(); err != nil || s.GetSummary().Duration != 400 {
		t.Fatalf("resume: %v, duration %d", err, s.GetSummary().Duration)
	}
	if err := s.Resume(); code(err) != errs.InvalidTransition {
		t.Fatal("resumed an ACTIVE session")
	}
	act(t, s, "mouse_move", mv)
	now = now.Add(600 * time.Millisecond)
	if lim := s.CheckLimits(); !lim.Limited || !strings.Contains(lim.Reason, "maxDurationMs") {
		t.Fatalf("duration limit %+v", lim)
	}
	if _, err := s.ExecuteAction(ctx, "mouse_move", mv); errs.From(err).Details["limit"] != "maxDurationMs" {
		t.Fatalf("after duration: %v", err)
	}
	end, err := s.End(ctx)
	if err != nil || end.Duration != 1000 || end.Summary.State != Ended || end.Screenshot == nil {
		t.Fatalf("end %+v %v", end, err)
	}
	if _, err := s.End(ctx); code(err) != errs.InvalidTransition {
		t.Fatal("ended twice")
	}

	// Failures: counted, kept, auto-pause; a lost display means ERROR.
	s2, _ := NewSession(SessionConfig{AutoPauseOnError: true}, drv)
	_, _ = s2.Start(ctx)
	drv.fail = errors.New("boom")
	if _, err := s2.ExecuteAction(ctx, "left_click", nil); code(err) != ErrActionFailed || s2.State() != Paused {
		t.Fatalf("auto pause: %v %s", err, s2.State())
	}
	if sum := s2.GetSummary(); sum.ErrorCount != 1 || sum.ActionCount != 1 || sum.Errors[0].ActionNumber != 1 {
		t.Fatalf("summary %+v", sum)
	}
	_ = s2.Resume()
	drv.fail = ErrDisplayLost
	if _, err := s2.ExecuteAction(ctx, "key", map[string]any{"key": "a"}); code(err) != ErrActionFailed || s2.State() != Error {
		t.Fatalf("lost display: %v %s", err, s2.State())
	}
	if _, err := s2.End(ctx); err != nil {
		t.Fatal(err)
	}
	// Sequences: stop at the first failure unless continueOnError.
	drv.fail = nil
	s3, _ := NewSession(SessionConfig{}, drv)
	_, _ = s3.Start(ctx)
	steps := []SequenceStep{{Action: "mouse_move", Params: mv}, {Action: "type", Params: map[string]any{}}, {Action: "left_click"}}
	zero := 0
	r, _ := s3.ExecuteSequence(ctx, steps, SequenceOptions{DelayBetweenActions: &zero})
	if r.Success || r.CompletedActions != 1 || r.FailedActions != 1 || len(r.Results) != 2 {
		t.Fatalf("stop on error %+v", r)
	}
	r, _ = s3.ExecuteSequence(ctx, steps, SequenceOptions{ContinueOnError: true, DelayBetweenActions: &zero})
	if r.Success || r.CompletedActions != 2 || r.FailedActions != 1 || len(r.Results) != 3 {
		t.Fatalf("continue on error %+v", r)
	}
	over := MaxWaitTimeMs + 1
	if _, err := s3.ExecuteSequence(ctx, steps, SequenceOptions{DelayBetweenActions: &over}); errs.From(err).Details["field"] != "delayBetweenActions" {
		t.Fatalf("delay above maxWaitTime: %v", err)
	}
	if _, err := s3.ExecuteSequence(ctx, nil, SequenceOptions{}); code(err) != errs.InvalidInput {
		t.Fatal(err)
	}
}

func FuzzParseActionParams(f *testing.F) {
	f.Add("mouse_move", `{"x":1,"y":2}`)
	f.Add("type", `{"text":"hello"}`)
	f.Add("key", `{"key":"ctrl+shift+Return F1"}`)
	f.Add("scroll", `{"direction":"up","amount":3}`)
	f.Add("left_click", `{}`)
	f.Add("triple_click", `{"x":1,"y":2,"modifiers":"shift"}`)
	f.Add("left_click_drag", `{"x":1,"y":2,"startX":3,"startY":4}`)
	f.Add("hold_key", `{"key":"ctrl","durationMs":10}`)
	f.Add("wait", `{"durationMs":0}`)
	f.Add("zoom", `{"region":[0,0,10,10]}`)
	f.Fuzz(func(t *testing.T, action, raw string) {
		var params map[string]any
		if json.Unmarshal([]byte(raw), &params) != nil {
			return
		}
		typ, p, err := ParseActionParams(action, params, 1280, 800)
		if err != nil {
			if e, ok := errs.As(err); !ok || e.Status != 400 || e.Details["field"] == nil {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if p.X != nil && (*p.X < 0 || *p.X >= 1280 || *p.Y < 0 || *p.Y >= 800) {
			t.Fatalf("coordinates out of range: %d,%d", *p.X, *p.Y)
		}
		if typ == Type && (len([]rune(p.Text)) > MaxTextLength || p.Text == "") {
			t.Fatal("bad text accepted")
		}
		if typ == Key && len(p.chords) == 0 {
			t.Fatal("key without chords")
		}
		if (typ == HoldKey && len(p.chords) != 1) || ((typ == HoldKey || typ == Wait) && (p.DurationMs == nil || *p.DurationMs < 0 || *p.DurationMs > MaxWaitTimeMs)) {
			t.Fatalf("bad hold/wait accepted: %+v", p)
		}
		if typ == Zoom && (len(p.Region) != 4 || p.Region[2] <= p.Region[0] || p.Region[3] <= p.Region[1] || p.Region[2] > 1280 || p.Region[3] > 800) {
			t.Fatalf("bad region accepted: %v", p.Region)
		}
		if p.Modifiers != "" && len(p.mods) == 0 {
			t.Fatal("modifiers without keys")
		}
		v := ValidateBetaActionParams(DefaultToolVersion, action, params)
		if v.Valid == (len(v.Errors) > 0) {
			t.Fatalf("inconsistent beta validation %+v", v)
		}
	})
}

// FuzzBetaRequest: any request the model may send is either refused with a
// reason or converts into internal parameters that validate; no version
// accepts an action it does not define.
func FuzzBetaRequest(f *testing.F) {
	f.Add(2, `{"action":"zoom","region":[0,0,10,10]}`)
	f.Add(1, `{"action":"hold_key","text":"shift","duration":0.5}`)
	f.Add(1, `{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[3,4],"text":"ctrl"}`)
	f.Add(0, `{"action":"scroll","scroll_direction":"up"}`)
	f.Add(0, `{"action":"left_click"}`)
	f.Fuzz(func(t *testing.T, vi int, raw string) {
		vs := ToolVersions()
		v := vs[((vi%len(vs))+len(vs))%len(vs)]
		var in map[string]any
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		action, _ := in["action"].(string)
		typ, p, err := ConvertBetaToInternal(v, action, in)
		if err != nil {
			if e, ok := errs.As(err); !ok || e.Status != 400 || e.Message == "" {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		if !v.Allows(action) {
			t.Fatalf("%s accepted %q", v.ToolType, action)
		}
		if typ == CursorPosition {
			return
		}
		if _, _, err := ParseActionParams(typ, p, MaxCoordinate+1, MaxCoordinate+1); err != nil {
			if e := errs.From(err); e.Details["constraint"] != "maximum" && e.Details["constraint"] != "minimum" && e.Details["constraint"] != "keysym" && e.Details["constraint"] != "pattern" && e.Details["constraint"] != "format" && e.Details["constraint"] != "maxLength" && e.Details["constraint"] != "maxItems" {
				t.Fatalf("converted %s %v does not validate: %v", typ, p, err)
			}
		}
	})
}

// TestHoldKeyKeepsTheSessionAnswering: while hold_key sleeps, the summary
// answers and pause works; cancelling the call ends the hold with 499 and
// the key is released all the same.
func TestHoldKeyKeepsTheSessionAnswering(t *testing.T) {
	drv := &fakeDriver{held: make(chan KeyChord, 1)}
	s, _ := NewSession(SessionConfig{}, drv)
	if _, err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.ExecuteAction(ctx, "hold_key", map[string]any{"key": "shift", "durationMs": MaxWaitTimeMs})
		done <- err
	}()
	<-drv.held
	if sum := s.GetSummary(); sum.State != Active || sum.ActionCount != 1 {
		t.Fatalf("summary during the hold %+v", sum)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; code(err) != errs.Cancelled {
		t.Fatalf("cancelled hold: %v", err)
	}
	if len(drv.released) != 1 || drv.released[0][0] != 0xffe1 {
		t.Fatalf("released %v", drv.released)
	}
}
