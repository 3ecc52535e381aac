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
// to a safe phase name also makes it the project's current phase. The
// value must nest at most MaxValueDepth levels and encode to at most
// MaxValueBytes bytes (400 naming value).
func (e *Engine) SetStateValue(keyPath string, value any) (bool, error) {
	return e.setStateValue(Call{}, keyPath, value)
}

func (e *Engine) setStateValue(c Call, keyPath string, value any) (bool, error) {
	segs, err := ParseKeyPath(keyPath)
	if err != nil {
		return false, err
	}
	norm, err := normalizeValue(value)
	if err != nil {
		return false, err
	}
	k := keyFor(c, "state.set", map[string]any{"keyPath": keyPath, "value": norm})
	_, _, err = writeKeyed(e, k, func(s *state, _ time.Time, _ func(string, any)) (bool, error) {
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
				return false, errs.Conflictf(errs.Conflict,
					"cannot set %s: %s holds a non-object value; delete it first or choose another key",
					keyPath, strings.Join(segs[:i+1], ".")).With("field", "keyPath").With("constraint", "object")
			}
			cur = m
		}
		var moveTo string
		if len(segs) == 1 && (segs[0] == "currentPhase" || segs[0] == "phase") {
			if p, ok := phaseFromValue(norm); ok {
				moveTo = p
				// A move the phase gate holds back writes nothing
				// (docs/decisions.md D45).
				if err := gateMove(s, p, actorOrUnknown(c.Actor)); err != nil {
					return false, err
				}
			}
		}
		cur[segs[len(segs)-1]] = norm
		if p := moveTo; p != "" {
			phaseMoved(s, p)
			s.Project.CurrentPhase = p
			if _, known := s.Project.Phases[p]; !known {
				s.Project.Phases[p] = PhaseRecord{Phase: p, PlanFile: planFileName(p)}
			}
		}
		return true, nil
	})
	err = e.refusedForGate(err)
	if ee, ok := errs.As(err); ok && ee.Details["field"] == "state" {
		// The state grew past its bound because of this value.
		ee.Details["field"] = "value"
	}
	return err == nil, err
}

// DeleteStateValue removes the value at keyPath; false when nothing was
// stored there.
func (e *Engine) DeleteStateValue(keyPath string) (bool, error) {
	return e.deleteStateValue(Call{}, keyPath)
}

func (e *Engine) deleteStateValue(c Call, keyPath string) (bool, error) {
	segs, err := ParseKeyPath(keyPath)
	if err != nil {
		return false, err
	}
	found, _, err := writeKeyed(e, keyFor(c, "state.delete", keyPath), func(s *state, _ time.Time, _ func(string, any)) (bool, error) {
		if _, ok := lookup(s.Values, segs); !ok {
			return false, errUnchanged
		}
		parent := s.Values
		if len(segs) > 1 {
			p, _ := lookup(s.Values, segs[:len(segs)-1])
			parent = p.(map[string]any) // the lookup above walked through it
		}
		delete(parent, segs[len(segs)-1])
		return true, nil
	})
	return found, err
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
// (maps, slices, json.Number, strings, bools, nil) and bounds it: at most
// MaxValueDepth levels of nesting and MaxValueBytes bytes, both measured on
// the compact encoding the state file stores.
func normalizeValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Invalidf("value", "type", "value must be JSON-encodable: %v", err)
	}
	if depth, err := jsonDepth(data, MaxValueDepth); err != nil {
		return nil, errs.Invalidf("value", "maxDepth", "value nests more than %d levels deep (at least %d); store a flatter value", MaxValueDepth, depth).
			With("limit", MaxValueDepth)
	}
	if len(data) > MaxValueBytes {
		return nil, errValueTooLarge(len(data))
	}
	return decodeGeneric(data)
}

// errValueTooLarge refuses a value whose compact encoding is size bytes.
func errValueTooLarge(size int) error {
	return errs.Invalidf("value", "maxBytes", "value encodes to %d bytes of compact JSON; at most %d are allowed", size, MaxValueBytes).
		With("limit", MaxValueBytes)
}

// decodeGeneric decodes JSON into its generic form, keeping numbers exact.
func decodeGeneric(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, errs.Invalidf("value", "type", "value must be JSON: %v", err)
	}
	return out, nil
}

// deepCopy copies a stored value (already bounded when it was stored).
func deepCopy(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := decodeGeneric(data)
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
