package computer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"log"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Button is a pointer button number as X numbers them.
type Button byte

// Pointer buttons; 4 to 7 are the wheel.
const (
	ButtonLeft       Button = 1
	ButtonMiddle     Button = 2
	ButtonRight      Button = 3
	ButtonWheelUp    Button = 4
	ButtonWheelDown  Button = 5
	ButtonWheelLeft  Button = 6
	ButtonWheelRight Button = 7
)

// Driver executes actions on a screen in physical pixels.
type Driver interface {
	// Size is the screen size in pixels.
	Size() (w, h int)
	// Capture returns the whole screen.
	Capture() (*image.RGBA, error)
	MoveMouse(x, y int) error
	// Click presses and releases a button count times at the cursor.
	Click(b Button, count int) error
	// Drag presses the left button at the cursor, moves to x,y and
	// releases it there.
	Drag(x, y int) error
	// Keys presses chords in order (each chord's keys held together).
	Keys(chords []KeyChord) error
	// Button presses (press true) or releases a button at the cursor.
	Button(b Button, press bool) error
	// Hold presses (press true) the keys of a chord in order, or releases
	// them in reverse; used for hold_key and modifiers held during a click.
	Hold(c KeyChord, press bool) error
	// TypeText types text character by character.
	TypeText(text string) error
	// Cursor reads the pointer position.
	Cursor() (x, y int, err error)
	Close() error
}

// ErrDisplayLost wraps failures of a display connection that is gone; a
// session that sees one moves to ERROR.
var ErrDisplayLost = errors.New("the X display connection was lost")

// X11 drives an X11 display through XTEST and GetImage, in pure Go.
type X11 struct {
	mu      sync.Mutex
	conn    *xgb.Conn
	display string
	root    xproto.Window
	w, h    int

	bpp, pad        int
	rMask, gMask    uint32
	bMask           uint32
	msb             bool
	minKC, maxKC    xproto.Keycode
	perKC           int
	keymap          []xproto.Keysym
	free            []xproto.Keycode
	scratch         map[Keysym]xproto.Keycode
	scratchOrder    []Keysym
	shiftKC         xproto.Keycode
	lastErr         atomic.Value // string
	closed          atomic.Bool
	drainDone       chan struct{}
	connectionError atomic.Bool
}

// SetXLogger routes the X library's own log lines (connection notes such as
// a missing .Xauthority) to l; by default they go to stderr.
func SetXLogger(l *log.Logger) { xgb.Logger = l }

// NotConfiguredDisplay is the error without a DISPLAY.
func NotConfiguredDisplay() *errs.Error {
	return errs.New(503, errs.NotConfigured, "computer use needs an X11 display: set DISPLAY (for example :0, or start Xvfb :99 -screen 0 1280x800x24 and set DISPLAY=:99) in the environment cairn runs in, then restart cairn").With("variable", "DISPLAY")
}

// OpenX11 connects to display (such as ":99") and checks for XTEST.
func OpenX11(display string) (*X11, error) {
	if display == "" {
		return nil, NotConfiguredDisplay()
	}
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, errs.Newf(503, errs.NotConfigured, "cannot connect to the X display DISPLAY=%s (%v): check that the X server runs and that this user may connect", display, err).With("variable", "DISPLAY")
	}
	fail := func(e error) (*X11, error) {
		conn.Close()
		return nil, e
	}
	if err := xtest.Init(conn); err != nil {
		return fail(errs.Newf(503, errs.NotConfigured, "the X display %s lacks the XTEST extension, which input needs (%v)", display, err))
	}
	if _, err := xtest.GetVersion(conn, 2, 2).Reply(); err != nil {
		return fail(errs.Newf(503, errs.NotConfigured, "XTEST on %s does not answer: %v", display, err))
	}
	setup := xproto.Setup(conn)
	scr := setup.DefaultScreen(conn)
	d := &X11{
		conn: conn, display: display, root: scr.Root,
		w: int(scr.WidthInPixels), h: int(scr.HeightInPixels),
		msb:   setup.ImageByteOrder == xproto.ImageOrderMSBFirst,
		minKC: setup.MinKeycode, maxKC: setup.MaxKeycode,
		scratch: map[Keysym]xproto.Keycode{}, drainDone: make(chan struct{}),
	}
	for _, f := range setup.PixmapFormats {
		if f.Depth == scr.RootDepth {
			d.bpp, d.pad = int(f.BitsPerPixel), int(f.ScanlinePad)
		}
	}
	for _, dep := range scr.AllowedDepths {
		for _, v := range dep.Visuals {
			if v.VisualId == scr.RootVisual {
				d.rMask, d.gMask, d.bMask = v.RedMask, v.GreenMask, v.BlueMask
			}
		}
	}
	if (d.bpp != 16 && d.bpp != 24 && d.bpp != 32) || d.rMask == 0 || d.gMask == 0 || d.bMask == 0 {
		return fail(errs.Newf(503, errs.NotConfigured, "the X display %s has a %d-bit root visual that screenshots do not support; use a TrueColor display of depth 16 or 24", display, d.bpp))
	}
	if err := d.loadKeymap(); err != nil {
		return fail(err)
	}
	// Unchecked requests report errors as events: drain them so the
	// connection's event buffer never fills and blocks its reader.
	go d.drain()
	return d, nil
}

func (d *X11) drain() {
	defer close(d.drainDone)
	for {
		ev, xerr := d.conn.WaitForEvent()
		if ev == nil && xerr == nil {
			d.connectionError.Store(true)
			return
		}
		if xerr != nil {
			d.lastErr.Store(xerr.Error())
		}
	}
}

func (d *X11) loadKeymap() error {
	n := int(d.maxKC) - int(d.minKC) + 1
	rep, err := xproto.GetKeyboardMapping(d.conn, d.minKC, byte(n)).Reply()
	if err != nil {
		return fmt.Errorf("read keyboard mapping: %w", err)
	}
	d.perKC, d.keymap = int(rep.KeysymsPerKeycode), rep.Keysyms
	d.free = d.free[:0]
	for i := 0; i < n; i++ {
		empty := true
		for j := 0; j < d.perKC; j++ {
			if d.keymap[i*d.perKC+j] != 0 {
				empty = false
			}
		}
		if empty {
			d.free = append(d.free, d.minKC+xproto.Keycode(i))
		}
	}
	kc, _, ok := d.lookup(0xffe1) // Shift_L
	if !ok {
		return errors.New("the keyboard mapping has no Shift_L key")
	}
	d.shiftKC = kc
	return nil
}

// lookup finds a keycode producing ks without (column 0) or with Shift
// (column 1).
func (d *X11) lookup(ks Keysym) (xproto.Keycode, bool, bool) {
	for col := 0; col < 2 && col < d.perKC; col++ {
		for i := 0; i*d.perKC+col < len(d.keymap); i += 1 {
			if Keysym(d.keymap[i*d.perKC+col]) == ks {
				return d.minKC + xproto.Keycode(i), col == 1, true
			}
		}
	}
	// Some keymaps list only the lower-case letter; X shifts it.
	if ks >= 'A' && ks <= 'Z' {
		if kc, _, ok := d.lookup(ks + 32); ok {
			return kc, true, true
		}
	}
	return 0, false, false
}

// keycodeFor returns a keycode for ks, binding a spare keycode to it (as
// xdotool does) when the keyboard has no key for it. Spare keycodes are
// reused least recently bound first and restored on Close.
func (d *X11) keycodeFor(ks Keysym) (xproto.Keycode, bool, error) {
	if kc, shift, ok := d.lookup(ks); ok {
		return kc, shift, nil
	}
	if kc, ok := d.scratch[ks]; ok {
		return kc, false, nil
	}
	var kc xproto.Keycode
	if len(d.scratch) < len(d.free) {
		kc = d.free[len(d.scratch)]
	} else if len(d.scratchOrder) > 0 {
		old := d.scratchOrder[0]
		d.scratchOrder = d.scratchOrder[1:]
		kc = d.scratch[old]
		delete(d.scratch, old)
		// Let the server finish events typed with the old binding first.
		d.conn.Sync()
	} else {
		return 0, false, fmt.Errorf("no spare keycode to bind keysym 0x%x", uint32(ks))
	}
	syms := make([]xproto.Keysym, d.perKC)
	for i := range syms {
		syms[i] = xproto.Keysym(ks)
	}
	if err := xproto.ChangeKeyboardMappingChecked(d.conn, 1, kc, byte(d.perKC), syms).Check(); err != nil {
		return 0, false, fmt.Errorf("bind keysym 0x%x: %w", uint32(ks), err)
	}
	d.scratch[ks] = kc
	d.scratchOrder = append(d.scratchOrder, ks)
	return kc, false, nil
}

// Size implements Driver.
func (d *X11) Size() (int, int) { return d.w, d.h }

// Display is the display name this driver is connected to.
func (d *X11) Display() string { return d.display }

func (d *X11) check() error {
	if d.closed.Load() || d.connectionError.Load() {
		return ErrDisplayLost
	}
	return nil
}

// sync waits until the server processed every request, then reports an
// X error raised by an unchecked one.
func (d *X11) sync() error {
	d.lastErr.Store("")
	if _, err := xproto.GetInputFocus(d.conn).Reply(); err != nil {
		return fmt.Errorf("%w: %v", ErrDisplayLost, err)
	}
	if s, _ := d.lastErr.Load().(string); s != "" {
		return fmt.Errorf("the X server refused a request: %s", s)
	}
	return nil
}

func (d *X11) fake(typ, detail byte, x, y int) {
	root := xproto.Window(0)
	if typ == xproto.MotionNotify {
		root = d.root
	}
	xtest.FakeInput(d.conn, typ, detail, 0, root, int16(x), int16(y), 0)
}

// MoveMouse implements Driver.
func (d *X11) MoveMouse(x, y int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	d.fake(xproto.MotionNotify, 0, x, y)
	return d.sync()
}

// Click implements Driver.
func (d *X11) Click(b Button, count int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	for i := 0; i < count; i++ {
		d.fake(xproto.ButtonPress, byte(b), 0, 0)
		d.fake(xproto.ButtonRelease, byte(b), 0, 0)
	}
	return d.sync()
}

// Drag implements Driver.
func (d *X11) Drag(x, y int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	d.fake(xproto.ButtonPress, byte(ButtonLeft), 0, 0)
	d.fake(xproto.MotionNotify, 0, x, y)
	d.fake(xproto.ButtonRelease, byte(ButtonLeft), 0, 0)
	return d.sync()
}

// Keys implements Driver.
func (d *X11) Keys(chords []KeyChord) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	for _, c := range chords {
		type press struct {
			kc    xproto.Keycode
			shift bool
		}
		keys := make([]press, 0, len(c))
		for _, ks := range c {
			kc, shift, err := d.keycodeFor(ks)
			if err != nil {
				return err
			}
			keys = append(keys, press{kc, shift})
		}
		shiftHeld := false
		for _, k := range keys {
			if k.kc == d.shiftKC {
				shiftHeld = true
			}
		}
		addShift := false
		for _, k := range keys {
			if k.shift && !shiftHeld && !addShift {
				addShift = true
				d.fake(xproto.KeyPress, byte(d.shiftKC), 0, 0)
			}
			d.fake(xproto.KeyPress, byte(k.kc), 0, 0)
		}
		for i := len(keys) - 1; i >= 0; i-- {
			d.fake(xproto.KeyRelease, byte(keys[i].kc), 0, 0)
		}
		if addShift {
			d.fake(xproto.KeyRelease, byte(d.shiftKC), 0, 0)
		}
	}
	return d.sync()
}

// Button implements Driver.
func (d *X11) Button(b Button, press bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	typ := byte(xproto.ButtonRelease)
	if press {
		typ = xproto.ButtonPress
	}
	d.fake(typ, byte(b), 0, 0)
	return d.sync()
}

// Hold implements Driver. The keys are pressed as they are (no implied
// Shift), as xdotool keydown does.
func (d *X11) Hold(c KeyChord, press bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	kcs := make([]xproto.Keycode, 0, len(c))
	for _, ks := range c {
		kc, _, err := d.keycodeFor(ks)
		if err != nil {
			return err
		}
		kcs = append(kcs, kc)
	}
	if press {
		for _, kc := range kcs {
			d.fake(xproto.KeyPress, byte(kc), 0, 0)
		}
	} else {
		for i := len(kcs) - 1; i >= 0; i-- {
			d.fake(xproto.KeyRelease, byte(kcs[i]), 0, 0)
		}
	}
	return d.sync()
}

// TypeText implements Driver.
func (d *X11) TypeText(text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return err
	}
	n := 0
	for _, r := range text {
		ks, ok := KeysymForRune(r)
		if !ok {
			return fmt.Errorf("cannot type %U", r)
		}
		kc, shift, err := d.keycodeFor(ks)
		if err != nil {
			return err
		}
		if shift {
			d.fake(xproto.KeyPress, byte(d.shiftKC), 0, 0)
		}
		d.fake(xproto.KeyPress, byte(kc), 0, 0)
		d.fake(xproto.KeyRelease, byte(kc), 0, 0)
		if shift {
			d.fake(xproto.KeyRelease, byte(d.shiftKC), 0, 0)
		}
		// A round trip now and then keeps the request queue short.
		if n++; n%256 == 0 {
			if err := d.sync(); err != nil {
				return err
			}
		}
	}
	return d.sync()
}

// Cursor implements Driver.
func (d *X11) Cursor() (int, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return 0, 0, err
	}
	rep, err := xproto.QueryPointer(d.conn, d.root).Reply()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrDisplayLost, err)
	}
	return int(rep.RootX), int(rep.RootY), nil
}

// Capture implements Driver: GetImage of the root window in ZPixmap
// format, converted from the visual's channel masks to RGBA.
func (d *X11) Capture() (*image.RGBA, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return nil, err
	}
	rep, err := xproto.GetImage(d.conn, xproto.ImageFormatZPixmap, xproto.Drawable(d.root), 0, 0, uint16(d.w), uint16(d.h), 0xffffffff).Reply()
	if err != nil {
		return nil, fmt.Errorf("%w: GetImage: %v", ErrDisplayLost, err)
	}
	return d.convert(rep.Data)
}

func (d *X11) convert(data []byte) (*image.RGBA, error) {
	stride := ((d.w*d.bpp + d.pad - 1) / d.pad) * d.pad / 8
	if len(data) < stride*d.h {
		return nil, fmt.Errorf("GetImage returned %d bytes, want %d", len(data), stride*d.h)
	}
	img := image.NewRGBA(image.Rect(0, 0, d.w, d.h))
	// The common case: 32 bpp, 8-bit channels, little-endian (BGRX).
	if d.bpp == 32 && !d.msb && d.rMask == 0xff0000 && d.gMask == 0xff00 && d.bMask == 0xff {
		for y := 0; y < d.h; y++ {
			src := data[y*stride : y*stride+d.w*4]
			dst := img.Pix[y*img.Stride : y*img.Stride+d.w*4]
			for x := 0; x < len(src); x += 4 {
				dst[x], dst[x+1], dst[x+2], dst[x+3] = src[x+2], src[x+1], src[x], 0xff
			}
		}
		return img, nil
	}
	bytesPP := d.bpp / 8
	chans := [3]struct {
		mask  uint32
		shift int
		max   uint32
	}{}
	for i, m := range []uint32{d.rMask, d.gMask, d.bMask} {
		chans[i].mask, chans[i].shift = m, bits.TrailingZeros32(m)
		chans[i].max = m >> chans[i].shift
	}
	for y := 0; y < d.h; y++ {
		row := data[y*stride:]
		for x := 0; x < d.w; x++ {
			p := row[x*bytesPP : x*bytesPP+bytesPP]
			var v uint32
			switch {
			case bytesPP == 4 && d.msb:
				v = binary.BigEndian.Uint32(p)
			case bytesPP == 4:
				v = binary.LittleEndian.Uint32(p)
			case bytesPP == 2 && d.msb:
				v = uint32(binary.BigEndian.Uint16(p))
			case bytesPP == 2:
				v = uint32(binary.LittleEndian.Uint16(p))
			case d.msb:
				v = uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
			default:
				v = uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
			}
			o := img.PixOffset(x, y)
			for i, c := range chans {
				img.Pix[o+i] = byte(((v & c.mask) >> c.shift) * 255 / c.max)
			}
			img.Pix[o+3] = 0xff
		}
	}
	return img, nil
}

// Close restores keycodes bound for typing and closes the connection.
func (d *X11) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
	if !d.connectionError.Load() {
		for _, kc := range d.scratch {
			_ = xproto.ChangeKeyboardMappingChecked(d.conn, 1, kc, byte(d.perKC), make([]xproto.Keysym, d.perKC)).Check()
		}
	}
	d.conn.Close()
	<-d.drainDone
	return nil
}

// Lost reports whether the display connection is gone.
func (d *X11) Lost() bool { return d.connectionError.Load() || d.closed.Load() }
