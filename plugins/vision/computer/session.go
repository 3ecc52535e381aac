package computer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"sync"
	"time"

	"golang.org/x/image/draw"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// State is a computer session's state.
type State string

// Session states (specification part 3).
const (
	Idle   State = "IDLE"
	Active State = "ACTIVE"
	Paused State = "PAUSED"
	Ended  State = "ENDED"
	Error  State = "ERROR"
)

// ErrActionFailed is the code of an action the display could not execute.
const ErrActionFailed = "ERR_ACTION_FAILED"

// Shot is the specification's screenshot result.
type Shot struct {
	Success  bool   `json:"success"`
	Data     []byte `json:"data,omitempty"`
	MimeType string `json:"mimeType"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Bytes    int    `json:"bytes"`
}

// Cursor is a pointer position in the session's coordinates.
type Cursor struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// ActionRecord is the specification's ActionRecord.
type ActionRecord struct {
	ActionType   ActionType   `json:"actionType"`
	Params       ActionParams `json:"params"`
	Result       string       `json:"result"`
	Success      bool         `json:"success"`
	Timestamp    string       `json:"timestamp"`
	ActionNumber int          `json:"actionNumber"`
}

// ActionError is an error kept in the session summary.
type ActionError struct {
	ActionNumber int    `json:"actionNumber"`
	ActionType   string `json:"actionType"`
	Code         string `json:"code"`
	Message      string `json:"message"`
	Timestamp    string `json:"timestamp"`
}

// ActionResult is executeAction's result.
type ActionResult struct {
	Success      bool       `json:"success"`
	SessionID    string     `json:"sessionId"`
	ActionNumber int        `json:"actionNumber"`
	ActionType   ActionType `json:"actionType"`
	Cursor       Cursor     `json:"cursor"`
	Screenshot   *Shot      `json:"screenshot,omitempty"`
	Text         string     `json:"text,omitempty"`
	Key          string     `json:"key,omitempty"`
	DurationMs   int64      `json:"durationMs"`
}

// LimitStatus is checkLimits' result.
type LimitStatus struct {
	Limited              bool   `json:"limited"`
	Reason               string `json:"reason,omitempty"`
	ActionsRemaining     int    `json:"actionsRemaining"`
	ScreenshotsRemaining int    `json:"screenshotsRemaining"`
	TimeRemainingMs      int64  `json:"timeRemainingMs"`
}

// Summary is getSummary's result.
type Summary struct {
	SessionID       string        `json:"sessionId"`
	State           State         `json:"state"`
	Description     string        `json:"description"`
	Duration        int64         `json:"duration"`
	ActionCount     int           `json:"actionCount"`
	ScreenshotCount int           `json:"screenshotCount"`
	ErrorCount      int           `json:"errorCount"`
	Errors          []ActionError `json:"errors"`
	Cursor          Cursor        `json:"cursor"`
	Limits          LimitStatus   `json:"limits"`
	Config          SessionConfig `json:"config"`
}

// StartResult is start's result.
type StartResult struct {
	Success    bool          `json:"success"`
	SessionID  string        `json:"sessionId"`
	StartTime  string        `json:"startTime"`
	Config     SessionConfig `json:"config"`
	Screenshot *Shot         `json:"screenshot,omitempty"`
	// BetaAvailable reports the hosted computer-use API's availability
	// when the session was given a check (nil otherwise).
	BetaAvailable *bool `json:"betaAvailable,omitempty"`
}

// EndResult is end's result.
type EndResult struct {
	Success    bool    `json:"success"`
	SessionID  string  `json:"sessionId"`
	Duration   int64   `json:"duration"`
	Summary    Summary `json:"summary"`
	Screenshot *Shot   `json:"screenshot,omitempty"`
}

// Session is a computer-use session (the specification's
// BetaComputerSession) on one Driver. It is safe for concurrent use;
// actions run one at a time.
type Session struct {
	// act serialises actions; mu guards the state and is released while
	// wait and hold_key sleep, so summaries, pause and end stay answerable.
	act   sync.Mutex
	mu    sync.Mutex
	id    string
	cfg   SessionConfig
	drv   Driver
	state State
	now   func() time.Time
	beta  func(ctx context.Context) error

	physW, physH int
	startTime    time.Time
	endTime      time.Time
	pausedAt     time.Time
	pausedTotal  time.Duration
	actions      int
	shots        int
	errList      []ActionError
	errCount     int
	history      []ActionRecord
	cursor       Cursor
	buttonDown   bool
}

// SessionOption configures a session.
type SessionOption func(*Session)

// WithClock replaces time.Now (tests of the duration limit).
func WithClock(now func() time.Time) SessionOption { return func(s *Session) { s.now = now } }

// WithBetaCheck makes start check the hosted computer-use API first: a
// session that the hosted model will drive refuses to start with f's error
// (not configured, model or beta unavailable), and reports
// betaAvailable: true otherwise.
func WithBetaCheck(f func(ctx context.Context) error) SessionOption {
	return func(s *Session) { s.beta = f }
}

// MaxErrorsKept bounds the errors a summary lists (errorCount counts all).
const MaxErrorsKept = 100

// NewSession validates cfg against the ceilings and makes an IDLE session
// on drv. Coordinates are in the session's display size; when it differs
// from the screen's they are scaled, and so are screenshots.
func NewSession(cfg SessionConfig, drv Driver, opts ...SessionOption) (*Session, error) {
	if drv == nil {
		return nil, NotConfiguredDisplay()
	}
	w, h := drv.Size()
	rc, err := cfg.Resolve(w, h)
	if err != nil {
		return nil, err
	}
	s := &Session{id: newID(), cfg: rc, drv: drv, state: Idle, now: time.Now, physW: w, physH: h}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "cs_" + hex.EncodeToString(b[:])
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Config returns the effective configuration.
func (s *Session) Config() SessionConfig { return s.cfg }

// State returns the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func transition(from State, op string, hint string) *errs.Error {
	return errs.Conflictf(errs.InvalidTransition, "cannot %s a session that is %s; %s", op, from, hint).With("state", string(from))
}

// Start moves IDLE to ACTIVE and captures an initial screenshot when
// captureScreenshots is on. Start and end screenshots do not count against
// maxScreenshots or maxActions.
func (s *Session) Start(ctx context.Context) (*StartResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Idle {
		return nil, transition(s.state, "start", "start a new session instead")
	}
	res := &StartResult{Success: true, SessionID: s.id, Config: s.cfg}
	if s.beta != nil {
		if err := s.beta(ctx); err != nil {
			return nil, err
		}
		ok := true
		res.BetaAvailable = &ok
	}
	if x, y, err := s.drv.Cursor(); err == nil {
		s.cursor = s.toLogical(x, y)
	} else {
		return nil, s.driverErr(err, "read the cursor")
	}
	if s.cfg.Capture() {
		shot, err := s.capture()
		if err != nil {
			return nil, s.driverErr(err, "capture the initial screenshot")
		}
		res.Screenshot = shot
	}
	s.state, s.startTime = Active, s.now()
	res.StartTime = stamp(s.startTime)
	return res, nil
}

// Pause moves ACTIVE to PAUSED; actions are refused until Resume.
func (s *Session) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Active {
		return transition(s.state, "pause", "only an ACTIVE session can be paused")
	}
	s.state, s.pausedAt = Paused, s.now()
	return nil
}

// Resume moves PAUSED to ACTIVE; paused time does not count against
// maxDurationMs.
func (s *Session) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Paused {
		return transition(s.state, "resume", "only a PAUSED session can be resumed")
	}
	s.pausedTotal += s.now().Sub(s.pausedAt)
	s.state = Active
	return nil
}

// End moves any state but ENDED to ENDED, capturing a final screenshot
// when captureScreenshots is on and the display still answers.
func (s *Session) End(context.Context) (*EndResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Ended {
		return nil, transition(s.state, "end", "it has already ended")
	}
	res := &EndResult{Success: true, SessionID: s.id}
	if s.buttonDown && s.state != Error {
		// A left_mouse_down without its up must not outlive the session.
		_ = s.drv.Button(ButtonLeft, false)
		s.buttonDown = false
	}
	if s.cfg.Capture() && s.state != Error && s.state != Idle {
		if shot, err := s.capture(); err == nil {
			res.Screenshot = shot
		}
	}
	now := s.now()
	if s.state == Paused {
		s.pausedTotal += now.Sub(s.pausedAt)
	}
	if s.startTime.IsZero() {
		s.startTime = now
	}
	s.state, s.endTime = Ended, now
	res.Duration = s.durationLocked().Milliseconds()
	res.Summary = s.summaryLocked()
	return res, nil
}

func (s *Session) durationLocked() time.Duration {
	if s.startTime.IsZero() {
		return 0
	}
	end := s.now()
	if !s.endTime.IsZero() {
		end = s.endTime
	}
	d := end.Sub(s.startTime) - s.pausedTotal
	if s.state == Paused {
		d -= end.Sub(s.pausedAt)
	}
	return max(d, 0)
}

// CheckLimits reports whether the session may execute another action.
func (s *Session) CheckLimits() LimitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limitsLocked()
}

func (s *Session) limitsLocked() LimitStatus {
	remain := time.Duration(s.cfg.MaxDurationMs)*time.Millisecond - s.durationLocked()
	st := LimitStatus{
		ActionsRemaining:     max(0, s.cfg.MaxActions-s.actions),
		ScreenshotsRemaining: max(0, s.cfg.MaxScreenshots-s.shots),
		TimeRemainingMs:      max(0, remain.Milliseconds()),
	}
	switch {
	case s.actions >= s.cfg.MaxActions:
		st.Limited, st.Reason = true, fmt.Sprintf("maxActions reached: %d of %d actions executed", s.actions, s.cfg.MaxActions)
	case remain <= 0:
		st.Limited, st.Reason = true, fmt.Sprintf("maxDurationMs reached: the session has been active for %d ms of %d", s.durationLocked().Milliseconds(), s.cfg.MaxDurationMs)
	}
	return st
}

func limitError(reason, limit string, value int) *errs.Error {
	return errs.Conflictf(errs.LimitExceeded, "%s; end this session (and start a new one if more work is needed)", reason).With("limit", limit).With("value", value)
}

// ExecuteAction validates params, checks the limits, and executes one
// action. Each executed action (failed or not) counts against maxActions;
// refused ones (bad parameters, limits, wrong state) do not.
func (s *Session) ExecuteAction(ctx context.Context, actionType string, params map[string]any) (*ActionResult, error) {
	s.act.Lock()
	defer s.act.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case Active:
	case Idle:
		return nil, transition(s.state, "act in", "start the session first")
	case Paused:
		return nil, transition(s.state, "act in", "resume the session first")
	default:
		return nil, transition(s.state, "act in", "start a new session")
	}
	t, p, err := ParseActionParams(actionType, params, s.cfg.DisplayWidth, s.cfg.DisplayHeight)
	if err != nil {
		s.noteError(0, actionType, err)
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.New(499, errs.Cancelled, "the action was cancelled before it ran")
	}
	if lim := s.limitsLocked(); lim.Limited {
		limit := "maxActions"
		if s.actions < s.cfg.MaxActions {
			limit = "maxDurationMs"
		}
		return nil, limitError(lim.Reason, limit, map[string]int{"maxActions": s.cfg.MaxActions, "maxDurationMs": s.cfg.MaxDurationMs}[limit])
	}
	if (t == Screenshot || t == Zoom) && s.shots >= s.cfg.MaxScreenshots {
		return nil, limitError(fmt.Sprintf("maxScreenshots reached: %d of %d screenshots taken", s.shots, s.cfg.MaxScreenshots), "maxScreenshots", s.cfg.MaxScreenshots)
	}
	s.actions++
	num := s.actions
	started := s.now()
	res := &ActionResult{Success: true, SessionID: s.id, ActionNumber: num, ActionType: t}
	summary, err := s.run(ctx, t, p, res)
	rec := ActionRecord{ActionType: t, Params: p, Result: summary, Success: err == nil, Timestamp: stamp(started), ActionNumber: num}
	if err != nil {
		rec.Result = err.Error()
		s.history = append(s.history, rec)
		te := s.driverErr(err, "execute "+string(t))
		s.noteError(num, string(t), te)
		if s.state == Active && s.cfg.AutoPauseOnError {
			s.state, s.pausedAt = Paused, s.now()
		}
		return nil, te
	}
	s.history = append(s.history, rec)
	res.Cursor = s.cursor
	res.DurationMs = s.now().Sub(started).Milliseconds()
	return res, nil
}

func (s *Session) noteError(num int, actionType string, err error) {
	s.errCount++
	if len(s.errList) >= MaxErrorsKept {
		return
	}
	te := errs.From(err)
	s.errList = append(s.errList, ActionError{ActionNumber: num, ActionType: actionType, Code: te.Code, Message: te.Message, Timestamp: stamp(s.now())})
}

// driverErr types a driver failure; a lost display puts the session in
// ERROR.
func (s *Session) driverErr(err error, what string) *errs.Error {
	if te, ok := errs.As(err); ok {
		return te
	}
	if errors.Is(err, ErrDisplayLost) {
		s.state = Error
		return errs.Newf(503, ErrActionFailed, "cannot %s: %v; the session is in ERROR; end it and start a new one once the display is back", what, err)
	}
	return errs.Newf(500, ErrActionFailed, "cannot %s: %v", what, err)
}

func (s *Session) run(ctx context.Context, t ActionType, p ActionParams, res *ActionResult) (string, error) {
	moveTo := func() error {
		if p.X == nil {
			return nil
		}
		px, py := s.toPhysical(*p.X, *p.Y)
		if err := s.drv.MoveMouse(px, py); err != nil {
			return err
		}
		s.cursor = Cursor{*p.X, *p.Y}
		return nil
	}
	// withMods holds the modifier chord (if any) around f and always
	// releases it.
	withMods := func(f func() error) error {
		if len(p.mods) == 0 {
			return f()
		}
		if err := s.drv.Hold(p.mods, true); err != nil {
			return err
		}
		err := f()
		if rerr := s.drv.Hold(p.mods, false); err == nil {
			err = rerr
		}
		return err
	}
	with := ""
	if p.Modifiers != "" {
		with = " with " + p.Modifiers
	}
	switch t {
	case Screenshot:
		shot, err := s.capture()
		if err != nil {
			return "", err
		}
		s.shots++
		res.Screenshot = shot
		return fmt.Sprintf("screenshot %dx%d, %d bytes PNG", shot.Width, shot.Height, shot.Bytes), nil
	case Zoom:
		shot, err := s.zoom(p.Region)
		if err != nil {
			return "", err
		}
		s.shots++
		res.Screenshot = shot
		return fmt.Sprintf("zoomed %d,%d-%d,%d to %dx%d, %d bytes PNG", p.Region[0], p.Region[1], p.Region[2], p.Region[3], shot.Width, shot.Height, shot.Bytes), nil
	case MouseMove:
		if err := moveTo(); err != nil {
			return "", err
		}
		return fmt.Sprintf("cursor at %d,%d", s.cursor.X, s.cursor.Y), nil
	case LeftClick, RightClick, MiddleClick, DoubleClick, TripleClick:
		if err := moveTo(); err != nil {
			return "", err
		}
		b, n := ButtonLeft, 1
		switch t {
		case RightClick:
			b = ButtonRight
		case MiddleClick:
			b = ButtonMiddle
		case DoubleClick:
			n = 2
		case TripleClick:
			n = 3
		}
		if err := withMods(func() error { return s.drv.Click(b, n) }); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s at %d,%d%s", t, s.cursor.X, s.cursor.Y, with), nil
	case LeftClickDrag:
		if p.StartX != nil {
			sx, sy := s.toPhysical(*p.StartX, *p.StartY)
			if err := s.drv.MoveMouse(sx, sy); err != nil {
				return "", err
			}
			s.cursor = Cursor{*p.StartX, *p.StartY}
		}
		px, py := s.toPhysical(*p.X, *p.Y)
		from := s.cursor
		if err := withMods(func() error { return s.drv.Drag(px, py) }); err != nil {
			return "", err
		}
		s.cursor = Cursor{*p.X, *p.Y}
		return fmt.Sprintf("dragged from %d,%d to %d,%d%s", from.X, from.Y, s.cursor.X, s.cursor.Y, with), nil
	case LeftMouseDown, LeftMouseUp:
		if err := moveTo(); err != nil {
			return "", err
		}
		down := t == LeftMouseDown
		if err := s.drv.Button(ButtonLeft, down); err != nil {
			return "", err
		}
		s.buttonDown = down
		state := "released"
		if down {
			state = "pressed"
		}
		return fmt.Sprintf("left button %s at %d,%d", state, s.cursor.X, s.cursor.Y), nil
	case Type:
		if err := s.drv.TypeText(p.Text); err != nil {
			return "", err
		}
		res.Text = p.Text
		return fmt.Sprintf("typed %d characters", len([]rune(p.Text))), nil
	case Key:
		if err := s.drv.Keys(p.chords); err != nil {
			return "", err
		}
		res.Key = p.Key
		return "pressed " + p.Key, nil
	case HoldKey:
		if err := s.drv.Hold(p.chords[0], true); err != nil {
			return "", err
		}
		serr := s.sleep(ctx, *p.DurationMs)
		// The key is released whatever happened during the hold.
		if err := s.drv.Hold(p.chords[0], false); err != nil {
			return "", err
		}
		if serr != nil {
			return "", serr
		}
		res.Key = p.Key
		return fmt.Sprintf("held %s for %d ms", p.Key, *p.DurationMs), nil
	case Wait:
		if err := s.sleep(ctx, *p.DurationMs); err != nil {
			return "", err
		}
		return fmt.Sprintf("waited %d ms", *p.DurationMs), nil
	case Scroll:
		if err := moveTo(); err != nil {
			return "", err
		}
		b := map[string]Button{"up": ButtonWheelUp, "down": ButtonWheelDown, "left": ButtonWheelLeft, "right": ButtonWheelRight}[p.Direction]
		if err := withMods(func() error { return s.drv.Click(b, p.Amount) }); err != nil {
			return "", err
		}
		return fmt.Sprintf("scrolled %s by %d at %d,%d%s", p.Direction, p.Amount, s.cursor.X, s.cursor.Y, with), nil
	}
	return "", fmt.Errorf("unhandled action %s", t)
}

// sleep waits ms with s.mu released (s.act still serialises actions); a
// cancelled context ends it early with 499.
func (s *Session) sleep(ctx context.Context, ms int) error {
	if ms <= 0 {
		return nil
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errs.New(499, errs.Cancelled, "the action was cancelled while waiting")
	case <-t.C:
		return nil
	}
}

// zoom captures region (x1, y1, x2, y2 in the session's coordinates) and
// scales it up to fit the session's display size, aspect ratio kept, so
// the model sees small text at a readable size.
func (s *Session) zoom(r []int) (*Shot, error) {
	img, err := s.drv.Capture()
	if err != nil {
		return nil, err
	}
	x1, y1 := s.toPhysical(r[0], r[1])
	x2, y2 := s.toPhysical(r[2], r[3])
	b := img.Bounds()
	x2, y2 = min(max(x2, x1+1), b.Max.X), min(max(y2, y1+1), b.Max.Y)
	sub, ok := img.SubImage(image.Rect(x1, y1, x2, y2)).(*image.RGBA)
	if !ok || sub.Bounds().Empty() {
		return nil, errs.Invalid("params.region", "format", "the region is empty on this display")
	}
	rw, rh := r[2]-r[0], r[3]-r[1]
	scale := min(float64(s.cfg.DisplayWidth)/float64(rw), float64(s.cfg.DisplayHeight)/float64(rh))
	w, h := max(1, int(float64(rw)*scale+0.5)), max(1, int(float64(rh)*scale+0.5))
	data, err := EncodeScreenshot(sub, w, h)
	if err != nil {
		return nil, err
	}
	return &Shot{Success: true, Data: data, MimeType: "image/png", Width: w, Height: h, Bytes: len(data)}, nil
}

func (s *Session) toPhysical(x, y int) (int, int) {
	if s.physW == s.cfg.DisplayWidth && s.physH == s.cfg.DisplayHeight {
		return x, y
	}
	return x * s.physW / s.cfg.DisplayWidth, y * s.physH / s.cfg.DisplayHeight
}

func (s *Session) toLogical(x, y int) Cursor {
	if s.physW == s.cfg.DisplayWidth && s.physH == s.cfg.DisplayHeight {
		return Cursor{x, y}
	}
	return Cursor{min(x*s.cfg.DisplayWidth/s.physW, s.cfg.DisplayWidth-1), min(y*s.cfg.DisplayHeight/s.physH, s.cfg.DisplayHeight-1)}
}

// capture takes a screenshot scaled to the session's display size.
func (s *Session) capture() (*Shot, error) {
	img, err := s.drv.Capture()
	if err != nil {
		return nil, err
	}
	data, err := EncodeScreenshot(img, s.cfg.DisplayWidth, s.cfg.DisplayHeight)
	if err != nil {
		return nil, err
	}
	return &Shot{Success: true, Data: data, MimeType: "image/png", Width: s.cfg.DisplayWidth, Height: s.cfg.DisplayHeight, Bytes: len(data)}, nil
}

// EncodeScreenshot scales img to w×h when needed and encodes it as PNG
// at the fastest compression: screenshots are taken often and sent at
// once, so encode time matters more than a few percent of size.
func EncodeScreenshot(img *image.RGBA, w, h int) ([]byte, error) {
	var src image.Image = img
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
		src = dst
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, src); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Cursor returns the tracked cursor position.
func (s *Session) Cursor() Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cursor
}

// GetSummary returns the session's summary; it does not end the session.
func (s *Session) GetSummary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summaryLocked()
}

func (s *Session) summaryLocked() Summary {
	return Summary{
		SessionID: s.id, State: s.state, Description: s.cfg.Description,
		Duration: s.durationLocked().Milliseconds(), ActionCount: s.actions, ScreenshotCount: s.shots,
		ErrorCount: s.errCount, Errors: append([]ActionError{}, s.errList...), Cursor: s.cursor,
		Limits: s.limitsLocked(), Config: s.cfg,
	}
}

// GetActionHistory returns every executed action in order.
func (s *Session) GetActionHistory() []ActionRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ActionRecord{}, s.history...)
}

// SequenceStep is one action of a sequence.
type SequenceStep struct {
	Action string `json:"action"`
	// Params may be left out for actions that take none (screenshot).
	Params map[string]any `json:"params,omitempty"`
}

// SequenceOptions are executeSequence's options.
type SequenceOptions struct {
	ContinueOnError bool
	// DelayBetweenActions in ms, 0 to MaxWaitTimeMs (nil means 100).
	DelayBetweenActions *int
}

// StepResult is one step's outcome in a sequence.
type StepResult struct {
	Index  int           `json:"index"`
	Action string        `json:"action"`
	Result *ActionResult `json:"result,omitempty"`
	Error  *errs.Error   `json:"error,omitempty"`
}

// SequenceResult is executeSequence's result.
type SequenceResult struct {
	Success          bool         `json:"success"`
	Results          []StepResult `json:"results"`
	TotalActions     int          `json:"totalActions"`
	CompletedActions int          `json:"completedActions"`
	FailedActions    int          `json:"failedActions"`
	Duration         int64        `json:"duration"`
	StoppedReason    string       `json:"stoppedReason,omitempty"`
}

// MaxSequenceLength bounds one sequence.
const MaxSequenceLength = MaxActionsCeiling

// ExecuteSequence runs actions in order with a delay between them. A
// failure stops the sequence unless continueOnError; reaching a limit or
// leaving ACTIVE always stops it.
func (s *Session) ExecuteSequence(ctx context.Context, steps []SequenceStep, o SequenceOptions) (*SequenceResult, error) {
	if len(steps) == 0 {
		return nil, errs.Invalid("actions", "minItems", "a sequence needs at least one action")
	}
	if len(steps) > MaxSequenceLength {
		return nil, errs.Invalidf("actions", "maxItems", "a sequence holds at most %d actions", MaxSequenceLength)
	}
	delay := DefaultSequenceDelay
	if o.DelayBetweenActions != nil {
		delay = *o.DelayBetweenActions
		if delay < 0 || delay > MaxWaitTimeMs {
			return nil, errs.Invalidf("delayBetweenActions", "maximum", "delayBetweenActions must be 0 to %d ms (the fixed ceiling maxWaitTime)", MaxWaitTimeMs).With("ceiling", MaxWaitTimeMs)
		}
	}
	start := time.Now()
	out := &SequenceResult{TotalActions: len(steps), Results: []StepResult{}}
	for i, st := range steps {
		if i > 0 && delay > 0 {
			t := time.NewTimer(time.Duration(delay) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				out.StoppedReason = "cancelled"
			case <-t.C:
			}
			if out.StoppedReason != "" {
				break
			}
		}
		r, err := s.ExecuteAction(ctx, st.Action, st.Params)
		sr := StepResult{Index: i, Action: st.Action, Result: r}
		if err != nil {
			te := errs.From(err)
			sr.Error = te
			out.FailedActions++
			out.Results = append(out.Results, sr)
			switch {
			case te.Code == errs.LimitExceeded:
				out.StoppedReason = te.Message
			case te.Code == errs.InvalidTransition || te.Code == errs.Cancelled:
				out.StoppedReason = te.Message
			case !o.ContinueOnError:
				out.StoppedReason = fmt.Sprintf("action %d failed and continueOnError is false", i)
			}
			if out.StoppedReason != "" {
				break
			}
			continue
		}
		out.CompletedActions++
		out.Results = append(out.Results, sr)
	}
	out.Success = out.CompletedActions == out.TotalActions
	out.Duration = time.Since(start).Milliseconds()
	return out, nil
}

// lastResult is the result line of the last executed action.
func (s *Session) lastResult() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return ""
	}
	return s.history[len(s.history)-1].Result
}
