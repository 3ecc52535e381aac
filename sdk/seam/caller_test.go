package seam

import "testing"

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
