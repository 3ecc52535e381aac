package computer

import (
	"slices"
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ToolVersion is one version of the hosted model's computer tool: the tool
// type sent in the definition, the beta header that enables it, and the
// actions the model may request with it. Each version is a fixed set; a
// model that asks for an action its version lacks gets an error result.
type ToolVersion struct {
	ToolType string   `json:"toolType"`
	Beta     string   `json:"beta"`
	Actions  []string `json:"actions"`
}

// betaSpec is one action's input fields in a tool version (required ones,
// then optional ones).
type betaSpec struct{ required, optional []string }

// The actions of computer_20241022: clicks act at the cursor, drags start
// from it, and there is no scroll.
var actions20241022 = map[string]betaSpec{
	"key":             {required: []string{"text"}},
	"type":            {required: []string{"text"}},
	"mouse_move":      {required: []string{"coordinate"}},
	"left_click":      {},
	"right_click":     {},
	"middle_click":    {},
	"double_click":    {},
	"left_click_drag": {required: []string{"coordinate"}},
	"screenshot":      {},
	"cursor_position": {},
}

// computer_20250124 lets clicks take a coordinate and modifier keys (text),
// drags a start, and adds scroll, triple_click, left_mouse_down/up,
// hold_key and wait.
var actions20250124 = func() map[string]betaSpec {
	m := map[string]betaSpec{}
	for k, v := range actions20241022 {
		m[k] = v
	}
	click := betaSpec{optional: []string{"coordinate", "text"}}
	for _, a := range []string{"left_click", "right_click", "middle_click", "double_click", "triple_click"} {
		m[a] = click
	}
	m["left_click_drag"] = betaSpec{required: []string{"coordinate"}, optional: []string{"start_coordinate", "text"}}
	m["scroll"] = betaSpec{required: []string{"scroll_direction"}, optional: []string{"scroll_amount", "coordinate", "text"}}
	m["left_mouse_down"] = betaSpec{optional: []string{"coordinate"}}
	m["left_mouse_up"] = betaSpec{optional: []string{"coordinate"}}
	m["hold_key"] = betaSpec{required: []string{"text", "duration"}}
	m["wait"] = betaSpec{required: []string{"duration"}}
	return m
}()

// computer_20251124 adds zoom: a region of the screen shown enlarged.
var actions20251124 = func() map[string]betaSpec {
	m := map[string]betaSpec{}
	for k, v := range actions20250124 {
		m[k] = v
	}
	m["zoom"] = betaSpec{required: []string{"region"}}
	return m
}()

func actionNames(m map[string]betaSpec) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The supported tool versions, oldest first (docs/decisions.md D29).
var (
	ToolVersion20241022 = ToolVersion{ToolType: "computer_20241022", Beta: "computer-use-2024-10-22", Actions: actionNames(actions20241022)}
	ToolVersion20250124 = ToolVersion{ToolType: "computer_20250124", Beta: "computer-use-2025-01-24", Actions: actionNames(actions20250124)}
	ToolVersion20251124 = ToolVersion{ToolType: "computer_20251124", Beta: "computer-use-2025-11-24", Actions: actionNames(actions20251124)}
	// DefaultToolVersion is the current version.
	DefaultToolVersion = ToolVersion20251124
)

// ToolVersions lists the supported versions, oldest first.
func ToolVersions() []ToolVersion {
	return []ToolVersion{ToolVersion20241022, ToolVersion20250124, ToolVersion20251124}
}

func specsOf(toolType string) map[string]betaSpec {
	switch toolType {
	case ToolVersion20241022.ToolType:
		return actions20241022
	case ToolVersion20250124.ToolType:
		return actions20250124
	case ToolVersion20251124.ToolType:
		return actions20251124
	}
	return nil
}

// Allows reports whether the version defines action.
func (v ToolVersion) Allows(action string) bool {
	_, ok := specsOf(v.ToolType)[action]
	return ok
}

// ParseToolVersion picks a version by its tool type ("computer_20250124")
// or by its beta header ("computer-use-2025-01-24"); the older
// "<tool type>,<beta header>" form is accepted when the two belong
// together. Anything else is refused naming the versions there are.
func ParseToolVersion(s string) (ToolVersion, error) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	for _, v := range ToolVersions() {
		switch {
		case len(parts) == 1 && (parts[0] == v.ToolType || parts[0] == v.Beta):
			return v, nil
		case len(parts) == 2 && parts[0] == v.ToolType && parts[1] == v.Beta:
			return v, nil
		}
	}
	names := make([]string, 0, 3)
	for _, v := range ToolVersions() {
		names = append(names, v.ToolType)
	}
	return DefaultToolVersion, errs.Invalidf("CAIRN_COMPUTER_TOOL", "enum", "computer tool %q is not supported; use one of %s (default %s)", s, strings.Join(names, ", "), DefaultToolVersion.ToolType)
}

// introducedIn names the oldest version that defines action ("" when none
// does).
func introducedIn(action string) string {
	for _, v := range ToolVersions() {
		if v.Allows(action) {
			return v.ToolType
		}
	}
	return ""
}

// refusal is the error text a model reads when it asks its version for an
// action that version does not define.
func (v ToolVersion) refusal(action string) string {
	msg := "action " + quote(action) + " is not available in " + v.ToolType
	if since := introducedIn(action); since != "" {
		msg += " (it needs " + since + " or later)"
	}
	return msg + "; the actions of " + v.ToolType + " are " + strings.Join(v.Actions, ", ")
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// ToolDefinition is one tool definition sent to the hosted API.
type ToolDefinition struct {
	Type            string `json:"type"`
	Name            string `json:"name"`
	DisplayWidthPx  int    `json:"display_width_px"`
	DisplayHeightPx int    `json:"display_height_px"`
	DisplayNumber   *int   `json:"display_number,omitempty"`
	// EnableZoom is set for computer_20251124, whose zoom action the API
	// offers only when asked.
	EnableZoom *bool `json:"enable_zoom,omitempty"`
}

// GetBetaToolDefinitions returns the tool definitions sent to the hosted
// API for a display of w×h.
func GetBetaToolDefinitions(v ToolVersion, w, h int, displayNumber *int) []ToolDefinition {
	d := ToolDefinition{Type: v.ToolType, Name: "computer", DisplayWidthPx: w, DisplayHeightPx: h, DisplayNumber: displayNumber}
	if slices.Contains(v.Actions, "zoom") {
		t := true
		d.EnableZoom = &t
	}
	return []ToolDefinition{d}
}
