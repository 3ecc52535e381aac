package ui

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

func TestGateApprovalArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    approvalInput
		want  map[string]any
		field string
	}{
		{approvalInput{Decision: "approve"}, map[string]any{"phase": "2", "decision": "approve", "via": "dashboard"}, ""},
		{approvalInput{Decision: "reject", Reason: " finish the tests "}, map[string]any{"phase": "2", "decision": "reject", "reason": "finish the tests", "via": "dashboard"}, ""},
		{approvalInput{Decision: "reject"}, nil, "reason"},
		{approvalInput{Decision: "later"}, nil, "decision"},
	} {
		got, e := c.in.gateArgs("2")
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

// gateBackend answers the approvals page's tools: no task waits, one sdd
// phase move does; sdd_gate_approve answers as the sdd area would.
type gateBackend struct{ *recorder }

func (b gateBackend) CallInternal(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	b.recorder.Call(ctx, name, args, c)
	switch name {
	case "task_approvals":
		return &seam.Result{Output: json.RawMessage(`{"pending":[]}`)}
	case "sdd_gate_requests":
		return &seam.Result{Output: json.RawMessage(`{"mode":"on","pending":[{"phase_from":"1","phase_to":"2","requested_by":"agent-1","requested_at":"2026-11-29T01:00:00.000Z","mode":"on","last_rejection":"add tests"}]}`)}
	case "sdd_gate_approve":
		return &seam.Result{Output: json.RawMessage(`{"state":"approved","by":"` + c.ID + `","current_phase":"2"}`)}
	}
	return b.recorder.CallInternal(ctx, name, args, c)
}

// The approvals page lists a waiting sdd phase move beside the tasks,
// counts it in the badge, and its Approve posts sdd_gate_approve via the
// dashboard as the logged-in person (docs/decisions.md D45).
func TestApprovalsPageListsPhaseMoves(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s, err := Start(gateBackend{rec}, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	c := login(t, s, Grant{Person: "alice", AllowActions: true})
	body := getPage(t, c, base(s)+"/view/approvals")
	main := body[strings.Index(body, "<main"):]
	for _, want := range []string{`data-phase="2"`, "1 → 2", "agent-1", "last rejected: add tests", `data-gate="approve"`, `data-gate="reject"`} {
		if !strings.Contains(main, want) {
			t.Errorf("the page lacks %q:\n%s", want, main)
		}
	}
	if strings.Contains(main, "data-none") {
		t.Errorf("the page says nothing waits while a phase move does:\n%s", main)
	}
	if count := getPage(t, c, base(s)+"/api/approvals/count"); !strings.Contains(count, `"pending":1`) {
		t.Errorf("badge count %s; want 1", count)
	}
	rec.reset()
	req, _ := http.NewRequest("POST", base(s)+"/api/sdd/gate/2/approve", strings.NewReader(`{"decision":"approve"}`))
	req.Header.Set("Origin", base(s))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(out), `"current_phase":"2"`) {
		t.Fatalf("approve: %d %s", res.StatusCode, out)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !reflect.DeepEqual(rec.names, []string{"sdd_gate_approve"}) || rec.calls[0].ID != "alice" || rec.calls[0].Source != PersonSource {
		t.Errorf("calls %v by %v; want one sdd_gate_approve by alice", rec.names, rec.calls)
	}
}

// Without the sdd area the tasks still show, with a line saying why no
// phase move is listed.
func TestApprovalsPageWithoutTheSddArea(t *testing.T) {
	t.Parallel()
	s, err := Start(taskOnlyBackend{newRecorder()}, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	body := getPage(t, login(t, s, Grant{Person: "alice"}), base(s)+"/view/approvals")
	if !strings.Contains(body, "data-none") || !strings.Contains(body, "data-phases-problem") {
		t.Fatalf("the page:\n%s", body[strings.Index(body, "<main"):])
	}
}

type taskOnlyBackend struct{ *recorder }

func (b taskOnlyBackend) CallInternal(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	if name == "task_approvals" {
		return &seam.Result{Output: json.RawMessage(`{"pending":[]}`)}
	}
	return b.recorder.CallInternal(ctx, name, args, c)
}
