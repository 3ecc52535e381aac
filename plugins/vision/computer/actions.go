package computer

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ActionType names a screen action.
type ActionType string

// The action types of the specification, plus the ones the hosted model's
// computer tool versions add (docs/decisions.md D29): middle_click,
// left_click_drag, triple_click, left_mouse_down, left_mouse_up, hold_key,
// wait and zoom.
const (
	Screenshot    ActionType = "screenshot"
	MouseMove     ActionType = "mouse_move"
	LeftClick     ActionType = "left_click"
	RightClick    ActionType = "right_click"
	DoubleClick   ActionType = "double_click"
	MiddleClick   ActionType = "middle_click"
	TripleClick   ActionType = "triple_click"
	LeftClickDrag ActionType = "left_click_drag"
	LeftMouseDown ActionType = "left_mouse_down"
	LeftMouseUp   ActionType = "left_mouse_up"
	Type          ActionType = "type"
	Key           ActionType = "key"
	HoldKey       ActionType = "hold_key"
	Scroll        ActionType = "scroll"
	Wait          ActionType = "wait"
	Zoom          ActionType = "zoom"
)

// ActionTypes lists every action type executeAction accepts.
var ActionTypes = []ActionType{Screenshot, MouseMove, LeftClick, RightClick, DoubleClick, MiddleClick, TripleClick, LeftClickDrag, LeftMouseDown, LeftMouseUp, Type, Key, HoldKey, Scroll, Wait, Zoom}

// Scroll amount bounds (clicks of the wheel).
const (
	DefaultScrollAmount = 3
	MaxScrollAmount     = 50
)

// ActionParams are an action's validated parameters in the internal
// format. X and Y are nil when the action uses the current cursor.
type ActionParams struct {
	X         *int   `json:"x,omitempty"`
	Y         *int   `json:"y,omitempty"`
	StartX    *int   `json:"startX,omitempty"`
	StartY    *int   `json:"startY,omitempty"`
	Text      string `json:"text,omitempty"`
	Key       string `json:"key,omitempty"`
	Modifiers string `json:"modifiers,omitempty"`
	Direction string `json:"direction,omitempty"`
	Amount    int    `json:"amount,omitempty"`
	// DurationMs is how long wait waits and hold_key holds.
	DurationMs *int `json:"durationMs,omitempty"`
	// Region is zoom's [x1, y1, x2, y2] in the session's coordinates.
	Region []int `json:"region,omitempty"`

	chords []KeyChord
	mods   KeyChord
}

var clickParams = struct{ required, optional []string }{optional: []string{"x", "y", "modifiers"}}

// allowed lists each type's parameters and which are required.
var allowed = map[ActionType]struct{ required, optional []string }{
	Screenshot:    {},
	MouseMove:     {required: []string{"x", "y"}},
	LeftClick:     clickParams,
	RightClick:    clickParams,
	DoubleClick:   clickParams,
	MiddleClick:   clickParams,
	TripleClick:   clickParams,
	LeftClickDrag: {required: []string{"x", "y"}, optional: []string{"startX", "startY", "modifiers"}},
	LeftMouseDown: {optional: []string{"x", "y"}},
	LeftMouseUp:   {optional: []string{"x", "y"}},
	Type:          {required: []string{"text"}},
	Key:           {required: []string{"key"}},
	HoldKey:       {required: []string{"key", "durationMs"}},
	Scroll:        {required: []string{"direction"}, optional: []string{"amount", "x", "y", "modifiers"}},
	Wait:          {required: []string{"durationMs"}},
	Zoom:          {required: []string{"region"}},
}

// ParseActionType checks an action type name.
func ParseActionType(s string) (ActionType, error) {
	for _, t := range ActionTypes {
		if string(t) == s {
			return t, nil
		}
	}
	names := make([]string, len(ActionTypes))
	for i, t := range ActionTypes {
		names[i] = string(t)
	}
	return "", errs.Invalidf("action", "enum", "action %q is not one of %s", s, strings.Join(names, ", "))
}

// ParseActionParams validates an action's parameters for a display of w×h
// (the session's logical size): no unknown or missing parameters, integer
// coordinates inside the display (and never above MaxCoordinate), text of
// 1 to MaxTextLength characters, key names xdotool knows, a scroll
// direction and an amount of 1 to MaxScrollAmount.
func ParseActionParams(actionType string, raw map[string]any, w, h int) (ActionType, ActionParams, error) {
	t, err := ParseActionType(actionType)
	if err != nil {
		return "", ActionParams{}, err
	}
	spec := allowed[t]
	known := map[string]bool{}
	for _, k := range spec.required {
		known[k] = true
		if _, ok := raw[k]; !ok {
			return t, ActionParams{}, errs.Invalidf("params."+k, "required", "action %s needs %s", t, k)
		}
	}
	for _, k := range spec.optional {
		known[k] = true
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return t, ActionParams{}, errs.Invalidf("params."+k, "additionalProperties", "action %s takes no parameter %q (it takes %s)", t, k, describeParams(spec.required, spec.optional))
		}
	}
	var p ActionParams
	_, hasX := raw["x"]
	_, hasY := raw["y"]
	if hasX != hasY {
		missing := "y"
		if !hasX {
			missing = "x"
		}
		return t, p, errs.Invalidf("params."+missing, "dependentRequired", "give x and y together (or neither to use the cursor position)")
	}
	if hasX {
		x, err := coordinate(raw["x"], "x", w)
		if err != nil {
			return t, p, err
		}
		y, err := coordinate(raw["y"], "y", h)
		if err != nil {
			return t, p, err
		}
		p.X, p.Y = &x, &y
	}
	_, hasSX := raw["startX"]
	_, hasSY := raw["startY"]
	if hasSX != hasSY {
		missing := "startY"
		if !hasSX {
			missing = "startX"
		}
		return t, p, errs.Invalidf("params."+missing, "dependentRequired", "give startX and startY together (or neither to start at the cursor)")
	}
	if hasSX {
		x, err := coordinate(raw["startX"], "startX", w)
		if err != nil {
			return t, p, err
		}
		y, err := coordinate(raw["startY"], "startY", h)
		if err != nil {
			return t, p, err
		}
		p.StartX, p.StartY = &x, &y
	}
	if v, ok := raw["modifiers"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return t, p, errs.Invalid("params.modifiers", "type", "modifiers must be a string such as shift or ctrl+shift")
		}
		chords, err := ParseKeySpec(s)
		if err != nil {
			return t, p, errs.From(err).With("field", "params.modifiers")
		}
		if len(chords) != 1 {
			return t, p, errs.Invalid("params.modifiers", "format", "modifiers are one chord held during the action, such as shift or ctrl+shift")
		}
		p.Modifiers, p.mods = s, chords[0]
	}
	if v, ok := raw["durationMs"]; ok {
		n, err := integer(v, "durationMs")
		if err != nil {
			return t, p, err
		}
		if n < 0 || n > MaxWaitTimeMs {
			return t, p, errs.Invalidf("params.durationMs", "maximum", "durationMs must be 0 to %d (the fixed ceiling maxWaitTime)", MaxWaitTimeMs).With("ceiling", MaxWaitTimeMs)
		}
		p.DurationMs = &n
	}
	if v, ok := raw["region"]; ok {
		r, err := region(v)
		if err != nil {
			return t, p, errs.Invalidf("params.region", "format", "region: %v", err)
		}
		for i, c := range r {
			limit, name := w, "x"
			if i%2 == 1 {
				limit, name = h, "y"
			}
			// The far corner may sit on the display's edge.
			if c < 0 || c > limit {
				return t, p, errs.Invalidf("params.region", "maximum", "region %s %d is outside the %d-pixel display (0 to %d)", name, c, limit, limit)
			}
		}
		p.Region = r
	}
	switch t {
	case Type:
		s, ok := raw["text"].(string)
		if !ok {
			return t, p, errs.Invalid("params.text", "type", "text must be a string")
		}
		n := utf8.RuneCountInString(s)
		if n == 0 || !utf8.ValidString(s) {
			return t, p, errs.Invalid("params.text", "minLength", "text must be non-empty UTF-8")
		}
		if n > MaxTextLength {
			return t, p, errs.Invalidf("params.text", "maxLength", "text is %d characters; the fixed ceiling maxTextLength is %d", n, MaxTextLength)
		}
		for _, r := range s {
			if _, ok := KeysymForRune(r); !ok {
				return t, p, errs.Invalidf("params.text", "pattern", "text contains the control character %U, which cannot be typed", r)
			}
		}
		p.Text = s
	case Key, HoldKey:
		s, ok := raw["key"].(string)
		if !ok {
			return t, p, errs.Invalid("params.key", "type", "key must be a string such as Return or ctrl+c")
		}
		chords, err := ParseKeySpec(s)
		if err != nil {
			e := errs.From(err)
			return t, p, e.With("field", "params.key")
		}
		if t == HoldKey && len(chords) != 1 {
			return t, p, errs.Invalid("params.key", "format", "hold_key holds one key or chord, such as shift or ctrl+alt")
		}
		p.Key, p.chords = s, chords
	case Scroll:
		d, ok := raw["direction"].(string)
		if !ok || (d != "up" && d != "down" && d != "left" && d != "right") {
			return t, p, errs.Invalid("params.direction", "enum", "direction must be up, down, left or right")
		}
		p.Direction, p.Amount = d, DefaultScrollAmount
		if v, ok := raw["amount"]; ok {
			n, err := integer(v, "amount")
			if err != nil {
				return t, p, err
			}
			if n < 1 || n > MaxScrollAmount {
				return t, p, errs.Invalidf("params.amount", "maximum", "amount must be 1 to %d", MaxScrollAmount)
			}
			p.Amount = n
		}
	}
	return t, p, nil
}

func describeParams(req, opt []string) string {
	parts := append([]string{}, req...)
	for _, o := range opt {
		parts = append(parts, o+"?")
	}
	if len(parts) == 0 {
		return "no parameters"
	}
	return strings.Join(parts, ", ")
}

func integer(v any, field string) (int, error) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		return n, nil
	case int64:
		if n > math.MaxInt32 || n < math.MinInt32 {
			return 0, errs.Invalidf("params."+field, "maximum", "%s is out of range", field)
		}
		return int(n), nil
	case json.Number:
		x, err := n.Float64()
		if err != nil {
			return 0, errs.Invalidf("params."+field, "type", "%s must be an integer", field)
		}
		f = x
	default:
		return 0, errs.Invalidf("params."+field, "type", "%s must be an integer", field)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, errs.Invalidf("params."+field, "type", "%s must be an integer", field)
	}
	return int(f), nil
}

func coordinate(v any, field string, limit int) (int, error) {
	n, err := integer(v, field)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, errs.Invalidf("params."+field, "minimum", "%s must be at least 0", field)
	}
	if n > MaxCoordinate {
		return 0, errs.Invalidf("params."+field, "maximum", "%s %d is above the fixed ceiling maxCoordinate %d", field, n, MaxCoordinate)
	}
	if n >= limit {
		return 0, errs.Invalidf("params."+field, "maximum", "%s %d is outside the %d-pixel display (0 to %d)", field, n, limit, limit-1)
	}
	return n, nil
}
