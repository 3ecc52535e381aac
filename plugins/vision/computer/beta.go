package computer

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// CursorPosition is the beta action that only reads the cursor.
const CursorPosition = "cursor_position"

// MaxBetaDurationSeconds bounds hold_key and wait: the fixed ceiling
// maxWaitTime in the tool's unit (seconds).
const MaxBetaDurationSeconds = MaxWaitTimeMs / 1000

// ValidationResult is validateBetaActionParams' result.
type ValidationResult struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
}

// ValidateBetaActionParams checks a computer-tool request of the hosted
// model (its action and the other input fields) against tool version v:
// the action must be one v defines, with the fields v gives it. An
// "action" key in params is ignored.
func ValidateBetaActionParams(v ToolVersion, action string, params map[string]any) ValidationResult {
	res := ValidationResult{Valid: true, Errors: []string{}}
	fail := func(format string, a ...any) {
		res.Valid = false
		res.Errors = append(res.Errors, fmt.Sprintf(format, a...))
	}
	spec, ok := specsOf(v.ToolType)[action]
	if !ok {
		fail("%s", v.refusal(action))
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
			fail("action %s takes no %s in %s", action, k, v.ToolType)
		}
	}
	for _, f := range []string{"coordinate", "start_coordinate"} {
		if val, ok := params[f]; ok {
			if _, _, err := pair(val); err != nil {
				fail("%s: %v", f, err)
			}
		}
	}
	if val, ok := params["text"]; ok {
		s, isStr := val.(string)
		switch {
		case !isStr:
			fail("text must be a string")
		case s == "":
			fail("text must not be empty")
		case utf8.RuneCountInString(s) > MaxTextLength:
			fail("text is longer than maxTextLength %d", MaxTextLength)
		}
	}
	if val, ok := params["scroll_direction"]; ok {
		if d, _ := val.(string); d != "up" && d != "down" && d != "left" && d != "right" {
			fail("scroll_direction must be up, down, left or right")
		}
	}
	if val, ok := params["scroll_amount"]; ok {
		if n, err := integer(val, "scroll_amount"); err != nil || n < 1 || n > MaxScrollAmount {
			fail("scroll_amount must be an integer 1 to %d", MaxScrollAmount)
		}
	}
	if val, ok := params["duration"]; ok {
		if _, err := durationMs(val); err != nil {
			fail("%v", err)
		}
	}
	if val, ok := params["region"]; ok {
		if _, err := region(val); err != nil {
			fail("region: %v", err)
		}
	}
	return res
}

// durationMs converts a duration in seconds (the tool's unit, fractions
// allowed) to whole milliseconds within maxWaitTime.
func durationMs(v any) (int, error) {
	f, ok := v.(float64)
	if !ok {
		n, err := integer(v, "duration")
		if err != nil {
			return 0, fmt.Errorf("duration must be a number of seconds")
		}
		f = float64(n)
	}
	if math.IsNaN(f) || f < 0 || f > MaxBetaDurationSeconds {
		return 0, fmt.Errorf("duration must be 0 to %d seconds (the fixed ceiling maxWaitTime)", MaxBetaDurationSeconds)
	}
	return int(math.Round(f * 1000)), nil
}

// region reads [x1, y1, x2, y2]: the top-left and bottom-right corners.
func region(v any) ([]int, error) {
	a, ok := v.([]any)
	if !ok {
		if ints, isInts := v.([]int); isInts {
			for _, i := range ints {
				a = append(a, i)
			}
		} else {
			return nil, fmt.Errorf("want [x1, y1, x2, y2]")
		}
	}
	if len(a) != 4 {
		return nil, fmt.Errorf("want [x1, y1, x2, y2], got %d numbers", len(a))
	}
	out := make([]int, 4)
	for i, x := range a {
		n, err := integer(x, "region")
		if err != nil {
			return nil, fmt.Errorf("corners must be integers")
		}
		out[i] = n
	}
	if out[2] <= out[0] || out[3] <= out[1] {
		return nil, fmt.Errorf("x2 must be greater than x1 and y2 greater than y1")
	}
	return out, nil
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

// ConvertBetaToInternal converts a computer-tool request valid for version
// v into an internal action type and parameters (for ParseActionParams).
// A cursor_position request converts to ("cursor_position", nil): it reads
// state and executes nothing. An action v does not define is refused.
func ConvertBetaToInternal(v ToolVersion, action string, params map[string]any) (string, map[string]any, error) {
	if val := ValidateBetaActionParams(v, action, params); !val.Valid {
		return "", nil, errs.Invalid("input", "computerTool", "invalid computer tool request: "+strings.Join(val.Errors, "; ")).With("toolVersion", v.ToolType)
	}
	out := map[string]any{}
	if c, ok := params["coordinate"]; ok {
		x, y, _ := pair(c)
		out["x"], out["y"] = x, y
	}
	if c, ok := params["start_coordinate"]; ok {
		x, y, _ := pair(c)
		out["startX"], out["startY"] = x, y
	}
	switch action {
	case CursorPosition:
		return CursorPosition, nil, nil
	case "key":
		out["key"] = params["text"]
	case "type":
		out["text"] = params["text"]
	case "hold_key":
		out["key"] = params["text"]
	case "scroll":
		out["direction"] = params["scroll_direction"]
		if a, ok := params["scroll_amount"]; ok {
			out["amount"] = a
		}
	case "zoom":
		r, _ := region(params["region"])
		out["region"] = r
	}
	switch action {
	case "left_click", "right_click", "middle_click", "double_click", "triple_click", "left_click_drag", "scroll":
		if t, ok := params["text"]; ok {
			out["modifiers"] = t
		}
	case "hold_key", "wait":
		ms, _ := durationMs(params["duration"])
		out["durationMs"] = ms
	}
	return action, out, nil
}
