package approval

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func ptr[T any](v T) *T { return &v }

// Every rule of a decision, and its refusal: the field and the rule.
func TestCheckHoldsEveryRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		in          Decision
		field, rule string
		want        Checked
	}{
		{name: "approve, defaults", in: Decision{Decision: Approve}, want: Checked{Approve: true, Via: ViaCLI, CompleteMove: true}},
		{name: "reject with a reason, trimmed", in: Decision{Decision: Reject, Reason: ptr("  add the examples "), Via: ptr(ViaDashboard), CompleteMove: ptr(false)},
			want: Checked{Reason: "add the examples", Via: ViaDashboard}},
		{name: "no decision", in: Decision{}, field: "decision", rule: "required"},
		{name: "unknown decision", in: Decision{Decision: "maybe"}, field: "decision", rule: "enum"},
		{name: "reject without a reason", in: Decision{Decision: Reject}, field: "reason", rule: "required"},
		{name: "reject with a blank reason", in: Decision{Decision: Reject, Reason: ptr(" \n")}, field: "reason", rule: "required"},
		{name: "reason too long", in: Decision{Decision: Approve, Reason: ptr(strings.Repeat("é", MaxReason+1))}, field: "reason", rule: "maxLength"},
		{name: "reason not UTF-8", in: Decision{Decision: Approve, Reason: ptr("\xff")}, field: "reason", rule: "utf8"},
		{name: "unknown via", in: Decision{Decision: Approve, Via: ptr("email")}, field: "via", rule: "enum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.in.Check()
			if c.field == "" {
				if err != nil || got != c.want {
					t.Fatalf("Check = %+v, %v; want %+v", got, err, c.want)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Status != 400 || e.Details["field"] != c.field || e.Details["constraint"] != c.rule {
				t.Fatalf("Check error %v; want 400 naming %s and %s", err, c.field, c.rule)
			}
		})
	}
}

// Who may decide: nobody approves their own move; the person at the
// agent's client may, except under strict; a requester may take its own
// move back.
func TestApproverRefusesTheRequesterAndStrictClients(t *testing.T) {
	t.Parallel()
	held := Held{Field: "task_id", Move: "T-5", Command: "cairn task approve T-5"}
	cases := []struct {
		name                   string
		c                      Checked
		actor, requester, mode string
		want, required         string
	}{
		{name: "another person approves", c: Checked{Approve: true, Via: ViaCLI}, actor: "alice", requester: "agent-1", mode: On, want: "alice"},
		{name: "the requester approves", c: Checked{Approve: true, Via: ViaDashboard}, actor: "agent-1", requester: "agent-1", mode: On, required: "another person"},
		{name: "the requester rejects", c: Checked{Via: ViaCLI, Reason: "no"}, actor: "agent-1", requester: "agent-1", mode: On, want: "agent-1"},
		{name: "the person at the client", c: Checked{Approve: true, Via: ViaElicitation}, actor: "agent-1", requester: "agent-1", mode: On, want: "agent-1 (person at the client)"},
		{name: "an input request", c: Checked{Approve: true, Via: ViaInputRequest}, actor: "agent-1", requester: "agent-1", mode: On, want: "agent-1 (person at the client)"},
		{name: "strict refuses the client", c: Checked{Approve: true, Via: ViaElicitation}, actor: "agent-1", requester: "agent-1", mode: Strict, required: "dashboard or cli"},
		{name: "strict takes the dashboard", c: Checked{Approve: true, Via: ViaDashboard}, actor: "alice", requester: "agent-1", mode: Strict, want: "alice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.c.Approver(c.actor, c.requester, c.mode, held)
			if c.required == "" {
				if err != nil || got != c.want {
					t.Fatalf("Approver = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Status != 403 || e.Code != errs.Forbidden || e.Details["required"] != c.required {
				t.Fatalf("Approver error %v; want 403 requiring %s", err, c.required)
			}
			if c.required == "another person" && (e.Details["field"] != "task_id" || !strings.Contains(e.Message, "T-5")) {
				t.Fatalf("the refusal %v does not name the held move", e)
			}
		})
	}
}
