package sdk

import (
	"context"
	"testing"
)

func TestCallerScopes(t *testing.T) {
	cases := []struct {
		name   string
		caller Caller
		scope  string
		want   bool
	}{
		{"operator holds every right", Caller{Source: "stdio"}, "admin", true},
		{"agent identity is still the operator", Caller{ID: "a", Source: "env"}, "write", true},
		{"READONLY session narrows the operator to read", Caller{Source: "stdio", Scopes: []string{"read"}}, "write", false},
		{"READONLY session keeps read", Caller{Source: "stdio", Scopes: []string{"read"}}, "read", true},
		{"API key with the scope", Caller{Source: "api_key", Scopes: []string{"read", "write"}}, "write", true},
		{"API key without the scope", Caller{Source: "api_key", Scopes: []string{"read"}}, "write", false},
		{"API key with no scopes holds nothing", Caller{Source: "api_key"}, "read", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.caller.HasScope(c.scope); got != c.want {
				t.Fatalf("HasScope(%q) = %v, want %v", c.scope, got, c.want)
			}
		})
	}
	if (Caller{Source: "api_key"}).Operator() || !(Caller{Source: "cli"}).Operator() {
		t.Fatal("Operator: only API-key callers are not the operator")
	}
}

func TestContextValues(t *testing.T) {
	ctx := context.Background()
	if c := CallerFrom(ctx); c.ID != "unknown" || c.Source != "unknown" {
		t.Fatalf("CallerFrom(empty) = %+v", c)
	}
	ctx = WithCaller(ctx, Caller{ID: "alice", Source: "env", Project: "web"})
	if c := CallerFrom(ctx); c.ID != "alice" || c.Project != "web" {
		t.Fatalf("CallerFrom = %+v", c)
	}
	if IdempotencyOf(ctx).Keyed() {
		t.Fatal("IdempotencyOf without a key is not zero")
	}
	ctx = WithIdempotency(ctx, Idempotency{Key: "s1:7", Replay: true})
	if v := IdempotencyOf(ctx); v.Key != "s1:7" || !v.Replay {
		t.Fatalf("IdempotencyOf = %+v", v)
	}
	var got []float64
	ReportProgress(ctx, 1, 2, "no listener") // a no-op, not a panic
	ctx = WithProgress(ctx, func(p, total float64, _ string) { got = append(got, p, total) })
	ReportProgress(ctx, 1, 2, "half")
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("progress = %v", got)
	}
	if RequestID(withRequestID(ctx, "r-1")) != "r-1" {
		t.Fatal("RequestID")
	}
}
