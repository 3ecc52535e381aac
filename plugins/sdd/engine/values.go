package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// GetStateValue returns the value at a dot-notation key path of the
// key-value state; found is false when nothing is stored there (the spec's
// undefined).
func (e *Engine) GetStateValue(keyPath string) (value any, found bool, err error) {
	segs, err := ParseKeyPath(keyPath)
	if err != nil {
		return nil, false, err
	}
	err = e.read(func(s *state, _ time.Time) error {
		value, found = lookup(s.Values, segs)
		if found {
			value = deepCopy(value)
		}
		return nil
	})
	return value, found, err
}

// StateValues returns a copy of the whole key-value state.
func (e *Engine) StateValues() (map[string]any, error) {
	var out map[string]any
	err := e.read(func(s *state, _ time.Time) error {
		out, _ = deepCopy(s.Values).(map[string]any)
		return nil
	})
	return out, err
}

// SetStateValue stores value (any JSON-encodable value) at keyPath,
// creating intermediate objects, and persists. A non-object value in the
// way of an intermediate segment is a 409 conflict rather than being
// silently replaced. Setting the single-segment key currentPhase (or phase)
// to a safe phase name also makes it the project's current phase.
func (e *Engine) SetStateValue(keyPath string, value any) (bool, error) {
	segs, err := ParseKeyPath(keyPath)
	if err != nil {
		return false, err
	}
	norm, err := normalizeValue(value)
	if err != nil {
		return false, err
	}
	err = e.write(func(s *state, _ time.Time, _ func(string, any)) error {
		cur := s.Values
		for i, seg := range segs[:len(segs)-1] {
			nxt, ok := cur[seg]
			if !ok || nxt == nil {
				m := map[string]any{}
				cur[seg] = m
				cur = m
				continue
			}
			m, ok := nxt.(map[string]any)
			if !ok {
				return errs.Conflictf(errs.Conflict,
					"cannot set %s: %s holds a non-object value; delete it first or choose another key",
					keyPath, strings.Join(segs[:i+1], ".")).With("field", "keyPath").With("constraint", "object")
			}
			cur = m
		}
		cur[segs[len(segs)-1]] = norm
		if len(segs) == 1 && (segs[0] == "currentPhase" || segs[0] == "phase") {
			if p, ok := phaseFromValue(norm); ok {
				s.Project.CurrentPhase = p
				if _, known := s.Project.Phases[p]; !known {
					s.Project.Phases[p] = PhaseRecord{Phase: p, PlanFile: planFileName(p)}
				}
			}
		}
		return nil
	})
	return err == nil, err
}

// DeleteStateValue removes the value at keyPath; false when nothing was
// stored there.
func (e *Engine) DeleteStateValue(keyPath string) (bool, error) {
	segs, err := ParseKeyPath(keyPath)
	if err != nil {
		return false, err
	}
	var found bool
	err = e.read(func(s *state, _ time.Time) error {
		_, found = lookup(s.Values, segs)
		return nil
	})
	if err != nil || !found {
		return false, err
	}
	err = e.write(func(s *state, _ time.Time, _ func(string, any)) error {
		parent := s.Values
		if len(segs) > 1 {
			p, ok := lookup(s.Values, segs[:len(segs)-1])
			if !ok {
				return nil
			}
			if parent, ok = p.(map[string]any); !ok {
				return nil
			}
		}
		delete(parent, segs[len(segs)-1])
		return nil
	})
	return err == nil, err
}

func lookup(root map[string]any, segs []string) (any, bool) {
	var cur any = root
	for _, seg := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// normalizeValue turns any JSON-encodable value into its generic JSON form
// (maps, slices, json.Number, strings, bools, nil) and bounds its size.
func normalizeValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Invalidf("value", "type", "value must be JSON-encodable: %v", err)
	}
	if len(data) > maxValueBytes {
		return nil, errs.Invalidf("value", "maxLength", "value must encode to at most %d bytes of JSON", maxValueBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, errs.Invalidf("value", "type", "value must be JSON: %v", err)
	}
	return out, nil
}

func deepCopy(v any) any {
	out, err := normalizeValue(v)
	if err != nil {
		return v
	}
	return out
}

func phaseFromValue(v any) (string, bool) {
	var p string
	switch x := v.(type) {
	case string:
		p = x
	case json.Number:
		p = x.String()
	default:
		return "", false
	}
	if checkName("phase", p) != nil {
		return "", false
	}
	return p, true
}
