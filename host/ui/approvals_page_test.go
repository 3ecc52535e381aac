package ui

import (
	"reflect"
	"testing"
)

func TestApprovalArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    approvalInput
		want  map[string]any
		field string
	}{
		{approvalInput{Decision: "approve", Reason: "ignored"}, map[string]any{"task_id": "T-3", "decision": "approve", "via": "dashboard"}, ""},
		{approvalInput{Decision: "reject", Reason: "  tests fail on CI "}, map[string]any{"task_id": "T-3", "decision": "reject", "reason": "tests fail on CI", "via": "dashboard"}, ""},
		{approvalInput{Decision: "reject", Reason: " "}, nil, "reason"},
		{approvalInput{}, nil, "decision"},
		{approvalInput{Decision: "maybe"}, nil, "decision"},
	} {
		got, e := c.in.args("T-3")
		if c.field != "" {
			if e == nil || e.Details["field"] != c.field {
				t.Errorf("%+v: error %v, want one naming %s", c.in, e, c.field)
			}
			continue
		}
		if e != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v (%v), want %v", c.in, got, e, c.want)
		}
	}
}
