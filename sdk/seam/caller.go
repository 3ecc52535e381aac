package seam

// Caller identifies who made a tool call (docs/decisions.md D4).
type Caller struct {
	// ID is the acting identity: CAIRN_AGENT_ID, else the MCP client's
	// name, else "unknown"; over authenticated HTTP, the API key's user.
	ID string
	// Source says where ID came from: "env", "client", "api_key", "unknown".
	Source string
	// ClientSessionID names the MCP client session the call came in on.
	ClientSessionID string
	// ClientName and ClientVersion come from the client's initialize.
	ClientName    string
	ClientVersion string
	// Scopes are an API-key caller's scopes ("read", "write", "admin").
	// Empty for the local operator, who holds every right (docs/decisions.md D22),
	// unless its session is READONLY: then ["read"].
	Scopes []string
	// Project is the session's active project (CAIRN_PROJECT, else the
	// slug of its workspace root's directory name; docs/decisions.md D21, D24).
	// The host registers it when the session starts; empty when unknown.
	Project string
}

// Operator reports whether the caller is the local operator (stdio or the
// CLI), who holds every right.
func (c Caller) Operator() bool { return c.Source != "api_key" }

// HasScope reports whether the caller holds scope: the operator holds all,
// unless the session narrowed them (a READONLY session holds only "read").
func (c Caller) HasScope(scope string) bool {
	if c.Operator() && len(c.Scopes) == 0 {
		return true
	}
	for _, s := range c.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}
