package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

func echo(_ context.Context, c *Call) *seam.Result {
	b, _ := json.Marshal(map[string]any{"caller": c.Caller.ID, "source": c.Caller.Source, "args": c.Args})
	return &seam.Result{Output: b, Status: 200}
}

func TestIdentify(t *testing.T) {
	cases := []struct {
		name          string
		agentID       string
		in            seam.Caller
		wantID, wantS string
	}{
		{"session agent wins", "host-agent", seam.Caller{ID: "a1", Source: "env", ClientName: "claude"}, "a1", "env"},
		{"api key wins", "host-agent", seam.Caller{ID: "alice", Source: "api_key"}, "alice", "api_key"},
		{"person wins", "", seam.Caller{ID: "dana", Source: "person"}, "dana", "person"},
		{"host agent", "host-agent", seam.Caller{ClientName: "claude"}, "host-agent", "env"},
		{"client name", "", seam.Caller{ClientName: "claude"}, "claude", "client"},
		{"unknown", "", seam.Caller{}, "unknown", "unknown"},
	}
	for _, c := range cases {
		var got seam.Caller
		p := New(func(_ context.Context, call *Call) *seam.Result { got = call.Caller; return &seam.Result{Status: 200} }, Identify(c.agentID))
		p.Run(context.Background(), &Call{Caller: c.in})
		if got.ID != c.wantID || got.Source != c.wantS {
			t.Errorf("%s: %s/%s, want %s/%s", c.name, got.ID, got.Source, c.wantID, c.wantS)
		}
	}
}

func TestFilterRecover(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	tool := &registry.Tool{Name: "t", Validator: schema.MustCompile(in)}
	refuse := func(_ context.Context, tl *registry.Tool) *errs.Error {
		if tl.Name == "hidden" {
			return errs.New(403, errs.Forbidden, "no")
		}
		return nil
	}
	boom := func(context.Context, *Call) *seam.Result { panic("boom") }
	p := New(echo, Recover(hclog.NewNullLogger()), Filter(refuse))
	if out := p.Run(context.Background(), &Call{Name: "t", Tool: tool, Args: json.RawMessage(`{"n":1}`)}); out.Err != nil {
		t.Fatalf("valid call: %v", out.Err)
	}
	if out := p.Run(context.Background(), &Call{Name: "hidden", Tool: &registry.Tool{Name: "hidden"}}); out.Status != 403 {
		t.Errorf("hidden tool: %+v", out)
	}
	if out := p.Run(context.Background(), &Call{Name: "nope"}); out.Status != 404 {
		t.Errorf("unknown tool: %+v", out)
	}
	pb := New(boom, Recover(hclog.NewNullLogger()))
	if out := pb.Run(context.Background(), &Call{Name: "t", Tool: tool}); out.Status != 500 || out.Err.Code != errs.Internal {
		t.Errorf("panic: %+v", out)
	}
	if got := p.Stages(); len(got) != 3 || got[0] != "recover" || got[2] != "dispatch" {
		t.Errorf("stages %v", got)
	}
}

func TestAuthorizeScopes(t *testing.T) {
	read := &registry.Tool{Name: "task_list", Owner: "core", Toolset: "core", ReadOnly: true}
	write := &registry.Tool{Name: "task_create", Owner: "core", Toolset: "core"}
	adminRead := &registry.Tool{Name: "admin_key_list", Owner: "admin", Toolset: "admin", ReadOnly: true}
	adminWrite := &registry.Tool{Name: "admin_key_create", Owner: "admin", Toolset: "admin"}
	host := &registry.Tool{Name: "server_ping", Owner: registry.HostOwner, ReadOnly: true}
	p := New(echo, Authorize())
	for _, c := range []struct {
		scopes []string
		tool   *registry.Tool
		source string
		want   string // "" allowed, else the required scope
	}{
		{[]string{"read"}, read, "api_key", ""},
		{[]string{"read"}, write, "api_key", "write"},
		{[]string{"read"}, adminRead, "api_key", "admin"},
		{[]string{"read"}, adminWrite, "api_key", "admin"},
		{[]string{"write"}, write, "api_key", ""},
		{[]string{"write"}, read, "api_key", "read"},
		{[]string{"write"}, adminWrite, "api_key", "admin"},
		{[]string{"admin"}, adminWrite, "api_key", ""},
		{[]string{"admin"}, adminRead, "api_key", ""},
		{[]string{"admin"}, write, "api_key", "write"},
		{nil, host, "api_key", ""},
		{nil, adminWrite, "env", ""},
		{nil, write, "client", ""},
	} {
		out := p.Run(context.Background(), &Call{Name: c.tool.Name, Tool: c.tool, Caller: seam.Caller{ID: "u", Source: c.source, Scopes: c.scopes}})
		switch {
		case c.want == "" && out.Err != nil:
			t.Errorf("%v %s via %s refused: %v", c.scopes, c.tool.Name, c.source, out.Err)
		case c.want != "" && (out.Err == nil || out.Status != 403 || out.Err.Details["required"] != c.want):
			t.Errorf("%v %s: %+v, want 403 requiring %s", c.scopes, c.tool.Name, out, c.want)
		}
	}
}
