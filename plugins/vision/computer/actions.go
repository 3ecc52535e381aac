package computer

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ActionType names a screen action.
type ActionType string

// The action types of the specification, plus middle_click and
// left_click_drag which the hosted model's computer tool can request.
const (
	Screenshot    ActionType = "screenshot"
	MouseMove     ActionType = "mouse_move"
	LeftClick     ActionType = "left_click"
	RightClick    ActionType = "right_click"
	DoubleClick   ActionType = "double_click"
	MiddleClick   ActionType = "middle_click"
	LeftClickDrag ActionType = "left_click_drag"
	Type          ActionType = "type"
	Key           ActionType = "key"
	Scroll        ActionType = "scroll"
)

// ActionTypes lists every action type executeAction accepts.
var ActionTypes = []ActionType{Screenshot, MouseMove, LeftClick, RightClick, DoubleClick, MiddleClick, LeftClickDrag, Type, Key, Scroll}

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
	Text      string `json:"text,omitempty"`
	Key       string `json:"key,omitempty"`
	Direction string `json:"direction,omitempty"`
	Amount    int    `json:"amount,omitempty"`

	chords []KeyChord
}

// allowed lists each type's parameters and which are required.
var allowed = map[ActionType]struct{ required, optional []string }{
	Screenshot:    {},
	MouseMove:     {required: []string{"x", "y"}},
	LeftClick:     {optional: []string{"x", "y"}},
	RightClick:    {optional: []string{"x", "y"}},
	DoubleClick:   {optional: []string{"x", "y"}},
	MiddleClick:   {optional: []string{"x", "y"}},
	LeftClickDrag: {required: []string{"x", "y"}},
	Type:          {required: []string{"text"}},
	Key:           {required: []string{"key"}},
	Scroll:        {required: []string{"direction"}, optional: []string{"amount", "x", "y"}},
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
	case Key:
		s, ok := raw["key"].(string)
		if !ok {
			return t, p, errs.Invalid("params.key", "type", "key must be a string such as Return or ctrl+c")
		}
		chords, err := ParseKeySpec(s)
		if err != nil {
			e := errs.From(err)
			return t, p, e.With("field", "params.key")
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

// ToolVersion pairs the hosted model's computer tool type with the beta
// header that enables it; newer versions change both together.
type ToolVersion struct {
	ToolType string `json:"toolType"`
	Beta     string `json:"beta"`
}

// ToolVersion20241022 is the version the specification names (PRODUCT.md
// D20 corrects the tool type to the API's spelling).
var ToolVersion20241022 = ToolVersion{ToolType: "computer_20241022", Beta: "computer-use-2024-10-22"}

// ToolDefinition is one tool definition sent to the hosted API.
type ToolDefinition struct {
	Type            string `json:"type"`
	Name            string `json:"name"`
	DisplayWidthPx  int    `json:"display_width_px"`
	DisplayHeightPx int    `json:"display_height_px"`
	DisplayNumber   *int   `json:"display_number,omitempty"`
}

// GetBetaToolDefinitions returns the tool definitions sent to the hosted
// API for a display of w×h.
func GetBetaToolDefinitions(v ToolVersion, w, h int, displayNumber *int) []ToolDefinition {
	return []ToolDefinition{{Type: v.ToolType, Name: "computer", DisplayWidthPx: w, DisplayHeightPx: h, DisplayNumber: displayNumber}}
}

// BetaActions are the actions of the hosted computer tool and the
// parameters each takes (required first).
var betaActions = map[string]struct{ required, optional []string }{
	"key":             {required: []string{"text"}},
	"type":            {required: []string{"text"}},
	"mouse_move":      {required: []string{"coordinate"}},
	"left_click":      {optional: []string{"coordinate"}},
	"right_click":     {optional: []string{"coordinate"}},
	"middle_click":    {optional: []string{"coordinate"}},
	"double_click":    {optional: []string{"coordinate"}},
	"left_click_drag": {required: []string{"coordinate"}},
	"screenshot":      {},
	"cursor_position": {},
	"scroll":          {required: []string{"scroll_direction"}, optional: []string{"coordinate", "scroll_amount"}},
}

// CursorPosition is the beta action that only reads the cursor.
const CursorPosition = "cursor_position"

// ValidationResult is validateBetaActionParams' result.
type ValidationResult struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
}

// ValidateBetaActionParams checks a computer-tool request of the hosted
// model (its action and the other input fields). An "action" key in params
// is ignored.
func ValidateBetaActionParams(action string, params map[string]any) ValidationResult {
	res := ValidationResult{Valid: true, Errors: []string{}}
	fail := func(format string, a ...any) {
		res.Valid = false
		res.Errors = append(res.Errors, fmt.Sprintf(format, a...))
	}
	spec, ok := betaActions[action]
	if !ok {
		fail("unknown action %q", action)
		return res
	}
	known := map[string]bool{"action": true}
	for _, k := range spec.required {
		known[k] = true
		if _, ok := params[k]; !ok {
			fail("action %s needs %s", action, k)
		}
	}
	for _, k := range spec.optional {
		known[k] = true
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			fail("action %s takes no %s", action, k)
		}
	}
	if v, ok := params["coordinate"]; ok {
		if _, _, err := pair(v); err != nil {
			fail("coordinate: %v", err)
		}
	}
	if v, ok := params["text"]; ok {
		s, isStr := v.(string)
		switch {
		case !isStr:
			fail("text must be a string")
		case (action == "key" || action == "type") && s == "":
			fail("text must not be empty")
		case utf8.RuneCountInString(s) > MaxTextLength:
			fail("text is longer than maxTextLength %d", MaxTextLength)
		}
	}
	if v, ok := params["scroll_direction"]; ok {
		if d, _ := v.(string); d != "up" && d != "down" && d != "left" && d != "right" {
			fail("scroll_direction must be up, down, left or right")
		}
	}
	if v, ok := params["scroll_amount"]; ok {
		if n, err := integer(v, "scroll_amount"); err != nil || n < 1 || n > MaxScrollAmount {
			fail("scroll_amount must be an integer 1 to %d", MaxScrollAmount)
		}
	}
	return res
}

func pair(v any) (int, int, error) {
	a, ok := v.([]any)
	if !ok {
		if ints, ok := v.([]int); ok {
			a = []any{}
			for _, i := range ints {
				a = append(a, i)
			}
		} else {
			return 0, 0, fmt.Errorf("want [x, y]")
		}
	}
	if len(a) != 2 {
		return 0, 0, fmt.Errorf("want [x, y], got %d numbers", len(a))
	}
	x, err := integer(a[0], "x")
	if err != nil {
		return 0, 0, fmt.Errorf("x must be an integer")
	}
	y, err := integer(a[1], "y")
	if err != nil {
		return 0, 0, fmt.Errorf("y must be an integer")
	}
	return x, y, nil
}

// ConvertBetaToInternal converts a validated computer-tool request into an
// internal action type and parameters (for ParseActionParams). A
// cursor_position request converts to ("cursor_position", nil): it reads
// state and executes nothing.
func ConvertBetaToInternal(action string, params map[string]any) (string, map[string]any, error) {
	if v := ValidateBetaActionParams(action, params); !v.Valid {
		return "", nil, errs.Invalid("input", "computerTool", "invalid computer tool request: "+strings.Join(v.Errors, "; "))
	}
	out := map[string]any{}
	if c, ok := params["coordinate"]; ok {
		x, y, _ := pair(c)
		out["x"], out["y"] = x, y
	}
	switch action {
	case CursorPosition:
		return CursorPosition, nil, nil
	case "key":
		out["key"] = params["text"]
	case "type":
		out["text"] = params["text"]
	case "scroll":
		out["direction"] = params["scroll_direction"]
		if a, ok := params["scroll_amount"]; ok {
			out["amount"] = a
		}
	}
	return action, out, nil
}
