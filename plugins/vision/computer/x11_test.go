package computer

import (
	"bytes"
	"context"
	"image/png"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

const screenW, screenH = 1280, 800

// testWindow is a full-screen green window that records input events.
type testWindow struct {
	t      *testing.T
	conn   *xgb.Conn
	win    xproto.Window
	root   xproto.Window
	minKC  xproto.Keycode
	maxKC  xproto.Keycode
	events chan xgb.Event
}

func newTestWindow(t *testing.T, display string) *testWindow {
	t.Helper()
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	setup := xproto.Setup(conn)
	scr := setup.DefaultScreen(conn)
	wid, err := xproto.NewWindowId(conn)
	if err != nil {
		t.Fatal(err)
	}
	mask := uint32(xproto.EventMaskKeyPress | xproto.EventMaskKeyRelease | xproto.EventMaskButtonPress | xproto.EventMaskButtonRelease)
	if err := xproto.CreateWindowChecked(conn, scr.RootDepth, wid, scr.Root, 0, 0, screenW, screenH, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask, []uint32{0x00ff00, mask}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(conn, wid).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.SetInputFocusChecked(conn, xproto.InputFocusPointerRoot, wid, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	w := &testWindow{t: t, conn: conn, win: wid, root: scr.Root, minKC: setup.MinKeycode, maxKC: setup.MaxKeycode, events: make(chan xgb.Event, 10000)}
	go func() {
		for {
			ev, xerr := conn.WaitForEvent()
			if ev == nil && xerr == nil {
				close(w.events)
				return
			}
			if ev != nil {
				w.events <- ev
			}
		}
	}()
	t.Cleanup(conn.Close)
	return w
}

func (w *testWindow) next() xgb.Event {
	select {
	case ev := <-w.events:
		return ev
	case <-time.After(10 * time.Second):
		w.t.Fatalf("no X event arrived at the test window\n%s", debug.Stack())
	}
	return nil
}

// buttonPresses reads events until n button presses arrived.
func (w *testWindow) buttonPresses(n int) []xproto.ButtonPressEvent {
	var out []xproto.ButtonPressEvent
	for len(out) < n {
		if ev, ok := w.next().(xproto.ButtonPressEvent); ok {
			out = append(out, ev)
		}
	}
	return out
}

// keyPresses reads events until n key presses arrived.
func (w *testWindow) keyPresses(n int) []xproto.KeyPressEvent {
	var out []xproto.KeyPressEvent
	for len(out) < n {
		if ev, ok := w.next().(xproto.KeyPressEvent); ok {
			out = append(out, ev)
		}
	}
	return out
}

// keysym translates a key press with the server's current mapping.
func (w *testWindow) keysym(ev xproto.KeyPressEvent) Keysym {
	w.t.Helper()
	rep, err := xproto.GetKeyboardMapping(w.conn, w.minKC, byte(w.maxKC-w.minKC+1)).Reply()
	if err != nil {
		w.t.Fatal(err)
	}
	per := int(rep.KeysymsPerKeycode)
	syms := rep.Keysyms[int(ev.Detail-w.minKC)*per:]
	col := 0
	if ev.State&xproto.ModMaskShift != 0 && Keysym(syms[1]) != 0 {
		col = 1
	}
	return Keysym(syms[col])
}

// typed decodes presses (skipping modifiers) into text.
func (w *testWindow) typed(presses []xproto.KeyPressEvent) string {
	var sb strings.Builder
	for _, ev := range presses {
		ks := w.keysym(ev)
		switch {
		case ks >= 0xffe1 && ks <= 0xffee:
		case ks == 0xff0d:
			sb.WriteByte('\n')
		case ks >= 0x01000000:
			sb.WriteRune(rune(ks - 0x01000000))
		case ks < 0x100:
			sb.WriteRune(rune(ks))
		default:
			sb.WriteString("?")
		}
	}
	return sb.String()
}

// typedText reads key presses until n characters (modifiers aside)
// arrived and decodes them.
func (w *testWindow) typedText(n int) string {
	var presses []xproto.KeyPressEvent
	for chars := 0; chars < n; {
		ev := w.keyPresses(1)[0]
		presses = append(presses, ev)
		if ks := w.keysym(ev); ks < 0xffe1 || ks > 0xffee {
			chars++
		}
	}
	return w.typed(presses)
}

func (w *testWindow) pointer() (int, int) {
	rep, err := xproto.QueryPointer(w.conn, w.root).Reply()
	if err != nil {
		w.t.Fatal(err)
	}
	return int(rep.RootX), int(rep.RootY)
}

func startX(t *testing.T) (*X11, *testWindow) {
	t.Helper()
	srv := xvfb.Start(t, screenW, screenH)
	win := newTestWindow(t, srv.Display)
	d, err := OpenX11(srv.Display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, win
}

func act(t *testing.T, s *Session, action string, params map[string]any) *ActionResult {
	t.Helper()
	r, err := s.ExecuteAction(context.Background(), action, params)
	if err != nil {
		t.Fatalf("%s %v: %v", action, params, err)
	}
	return r
}

func TestX11ActionsReachTheScreen(t *testing.T) {
	d, win := startX(t)
	s, err := NewSession(SessionConfig{}, d)
	if err != nil {
		t.Fatal(err)
	}
	start, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.DisplayWidth != screenW || c.DisplayHeight != screenH {
		t.Fatalf("session adopted %dx%d, want the display's size", c.DisplayWidth, c.DisplayHeight)
	}

	// Screenshots decode to the display size and show the green window.
	for _, shot := range []*Shot{start.Screenshot, act(t, s, "screenshot", nil).Screenshot} {
		img, err := png.Decode(bytes.NewReader(shot.Data))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != screenW || b.Dy() != screenH || shot.MimeType != "image/png" {
			t.Fatalf("screenshot is %v %s", b, shot.MimeType)
		}
		if r, g, b, _ := img.At(640, 400).RGBA(); r != 0 || g != 0xffff || b != 0 {
			t.Fatalf("pixel at 640,400 = %x %x %x, want the window's green", r, g, b)
		}
	}

	// Mouse moves land where asked.
	for _, p := range [][2]int{{200, 300}, {0, 0}, {1279, 799}, {640, 17}} {
		r := act(t, s, "mouse_move", map[string]any{"x": p[0], "y": p[1]})
		if x, y := win.pointer(); x != p[0] || y != p[1] || r.Cursor.X != p[0] || r.Cursor.Y != p[1] {
			t.Fatalf("moved to %v: pointer %d,%d, tracked %+v", p, x, y, r.Cursor)
		}
	}

	// Clicks arrive as button events where asked.
	act(t, s, "left_click", map[string]any{"x": 100, "y": 150})
	if ev := win.buttonPresses(1)[0]; ev.Detail != 1 || ev.EventX != 100 || ev.EventY != 150 {
		t.Fatalf("left click: %+v", ev)
	}
	act(t, s, "right_click", nil)
	if ev := win.buttonPresses(1)[0]; ev.Detail != 3 || ev.EventX != 100 || ev.EventY != 150 {
		t.Fatalf("right click: %+v", ev)
	}
	act(t, s, "double_click", map[string]any{"x": 5, "y": 6})
	for _, ev := range win.buttonPresses(2) {
		if ev.Detail != 1 || ev.EventX != 5 || ev.EventY != 6 {
			t.Fatalf("double click: %+v", ev)
		}
	}
	act(t, s, "middle_click", nil)
	if ev := win.buttonPresses(1)[0]; ev.Detail != 2 {
		t.Fatalf("middle click: %+v", ev)
	}
	act(t, s, "scroll", map[string]any{"direction": "down", "amount": 3, "x": 400, "y": 400})
	for _, ev := range win.buttonPresses(3) {
		if ev.Detail != 5 || ev.EventX != 400 {
			t.Fatalf("scroll: %+v", ev)
		}
	}
	act(t, s, "scroll", map[string]any{"direction": "up"})
	if evs := win.buttonPresses(DefaultScrollAmount); evs[0].Detail != 4 {
		t.Fatalf("scroll up: %+v", evs)
	}
	act(t, s, "left_click_drag", map[string]any{"x": 700, "y": 500})
	if ev := win.buttonPresses(1)[0]; ev.Detail != 1 || ev.EventX != 400 {
		t.Fatalf("drag press: %+v", ev)
	}
	if x, y := win.pointer(); x != 700 || y != 500 {
		t.Fatalf("drag ended at %d,%d", x, y)
	}

	// Key presses, by xdotool names.
	act(t, s, "key", map[string]any{"key": "Return"})
	if ks := win.keysym(win.keyPresses(1)[0]); ks != 0xff0d {
		t.Fatalf("Return arrived as keysym %#x", ks)
	}
	act(t, s, "key", map[string]any{"key": "ctrl+c"})
	presses := win.keyPresses(2)
	if win.keysym(presses[0]) != 0xffe3 || win.keysym(presses[1]) != 'c' || presses[1].State&xproto.ModMaskControl == 0 {
		t.Fatalf("ctrl+c arrived as %#x %#x state %#x", win.keysym(presses[0]), win.keysym(presses[1]), presses[1].State)
	}
	act(t, s, "key", map[string]any{"key": "F5 super Escape"})
	presses = win.keyPresses(3)
	if win.keysym(presses[0]) != 0xffc2 || win.keysym(presses[1]) != 0xffeb || win.keysym(presses[2]) != 0xff1b {
		t.Fatalf("F5 super Escape arrived as %#x %#x %#x", win.keysym(presses[0]), win.keysym(presses[1]), win.keysym(presses[2]))
	}

	// Typed text arrives, shifted characters included.
	text := "Hello, World! (1+1=2) ~/path_x"
	act(t, s, "type", map[string]any{"text": text})
	if got := win.typedText(len([]rune(text))); got != text {
		t.Fatalf("typed %q, want %q", got, text)
	}
	// Characters the keyboard lacks are bound to a spare keycode.
	act(t, s, "type", map[string]any{"text": "é€"})
	if got := win.typedText(2); got != "é€" {
		t.Fatalf("typed %q, want é€", got)
	}

	sum := s.GetSummary()
	if sum.ScreenshotCount != 1 || sum.ErrorCount != 0 || sum.ActionCount != len(s.GetActionHistory()) {
		t.Fatalf("summary %+v", sum)
	}
}

func TestX11SessionScalesCoordinatesAndScreenshots(t *testing.T) {
	d, win := startX(t)
	s, err := NewSession(SessionConfig{DisplayWidth: 640, DisplayHeight: 400}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	act(t, s, "mouse_move", map[string]any{"x": 320, "y": 100})
	if x, y := win.pointer(); x != 640 || y != 200 {
		t.Fatalf("pointer at %d,%d, want 640,200", x, y)
	}
	shot := act(t, s, "screenshot", nil).Screenshot
	cfg, err := png.DecodeConfig(bytes.NewReader(shot.Data))
	if err != nil || cfg.Width != 640 || cfg.Height != 400 {
		t.Fatalf("scaled screenshot %+v %v", cfg, err)
	}
	if _, err := s.ExecuteAction(context.Background(), "mouse_move", map[string]any{"x": 640, "y": 10}); code(err) != errs.InvalidInput {
		t.Fatalf("x outside the session's display: %v", err)
	}
}

func TestX11LimitsStopAtExactlyTheCount(t *testing.T) {
	d, _ := startX(t)
	ctx := context.Background()
	f := false
	s, err := NewSession(SessionConfig{MaxActions: 5, MaxScreenshots: 2, CaptureScreenshots: &f}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	act(t, s, "screenshot", nil)
	act(t, s, "screenshot", nil)
	if _, err := s.ExecuteAction(ctx, "screenshot", nil); code(err) != errs.LimitExceeded {
		t.Fatalf("third screenshot: %v", err)
	}
	for i := 3; i <= 5; i++ {
		if r := act(t, s, "mouse_move", map[string]any{"x": i, "y": i}); r.ActionNumber != i {
			t.Fatalf("action number %d, want %d", r.ActionNumber, i)
		}
	}
	if lim := s.CheckLimits(); !lim.Limited || lim.ActionsRemaining != 0 || !strings.Contains(lim.Reason, "maxActions") {
		t.Fatalf("limits %+v", lim)
	}
	_, err = s.ExecuteAction(ctx, "mouse_move", map[string]any{"x": 1, "y": 1})
	if e := errs.From(err); e.Code != errs.LimitExceeded || e.Details["limit"] != "maxActions" {
		t.Fatalf("sixth action: %v", err)
	}
	seq, err := s.ExecuteSequence(ctx, []SequenceStep{{Action: "mouse_move", Params: map[string]any{"x": 2, "y": 2}}, {Action: "screenshot"}}, SequenceOptions{ContinueOnError: true})
	if err != nil || seq.CompletedActions != 0 || seq.FailedActions != 1 || !strings.Contains(seq.StoppedReason, "maxActions") {
		t.Fatalf("sequence past the limit: %+v %v", seq, err)
	}
	if sum := s.GetSummary(); sum.ActionCount != 5 || sum.ScreenshotCount != 2 || len(s.GetActionHistory()) != 5 {
		t.Fatalf("summary %+v", sum)
	}
	end, err := s.End(ctx)
	if err != nil || end.Summary.State != Ended || end.Screenshot != nil {
		t.Fatalf("end %+v %v", end, err)
	}
}

func BenchmarkX11Screenshot(b *testing.B) {
	srv := xvfb.Start(b, screenW, screenH)
	d, err := OpenX11(srv.Display)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.Run("capture", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := d.Capture(); err != nil {
				b.Fatal(err)
			}
		}
	})
	img, _ := d.Capture()
	b.Run("encode_png", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := EncodeScreenshot(img, screenW, screenH); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("type_100_chars", func(b *testing.B) {
		text := strings.Repeat("abcdefghij", 10)
		for i := 0; i < b.N; i++ {
			if err := d.TypeText(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return errs.From(err).Code
}
