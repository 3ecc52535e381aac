package e2e

import (
	"strings"
	"testing"
)

// An unknown argument is refused naming the known one meant, through the
// real binary: an agent that wrote key for sdd_state's keyPath learns the
// right name from the refusal; one whose argument is like nothing known
// gets no guess.
func TestUnknownArgumentNamesTheClosest(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	for _, tc := range []struct {
		args       map[string]any
		field, say string // say: the suggestion ("" none)
	}{
		{map[string]any{"action": "get", "key": "currentPhase"}, "key", "keyPath"},
		{map[string]any{"action": "get", "KeyPath": "currentPhase"}, "KeyPath", "keyPath"},
		{map[string]any{"action": "get", "keyPath": "currentPhase", "colour": "red"}, "colour", ""},
	} {
		e, st := c.fail("sdd_state", tc.args)
		d, _ := e["details"].(map[string]any)
		msg, _ := e["message"].(string)
		if st != 400 || e["code"] != "ERR_INVALID_INPUT" || d["field"] != tc.field || d["constraint"] != "additionalProperties" {
			t.Errorf("%v: %v %v field=%v constraint=%v, want 400 ERR_INVALID_INPUT field=%s constraint=additionalProperties", tc.args, st, e["code"], d["field"], d["constraint"], tc.field)
		}
		got, has := d["suggestion"]
		switch {
		case tc.say == "" && (has || strings.Contains(msg, "did you mean")):
			t.Errorf("%v: suggests %v (%q), want no guess", tc.args, got, msg)
		case tc.say != "" && (got != tc.say || !strings.Contains(msg, "did you mean "+tc.say+"?")):
			t.Errorf("%v: suggestion %v, message %q; want %s", tc.args, got, msg, tc.say)
		}
	}
}
