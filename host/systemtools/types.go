package systemtools

import (
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/trust"
)

// Timestamp formats t as docs/decisions.md D5 fixes it (JavaScript's toISOString).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// NoInput is the input of tools that take no arguments.
type NoInput struct{}

// PingOutput is server_ping's output.
type PingOutput struct {
	OK        bool   `json:"ok"`
	Timestamp string `json:"timestamp"`
}

// DBInfo reports the core store: Kind is "bbolt" or "postgres" (Path is
// then the URL without its password) and LatencyMs one timed trivial read.
type DBInfo struct {
	Open        bool    `json:"open"`
	UserVersion int     `json:"user_version"`
	Path        string  `json:"path"`
	Kind        string  `json:"kind,omitempty"`
	LatencyMs   float64 `json:"latency_ms,omitempty"`
}

// MiddlewareInfo lists the pipeline stages.
type MiddlewareInfo struct {
	Stages []string `json:"stages"`
}

// ToolsInfo counts tools.
type ToolsInfo struct {
	Registered int `json:"registered"`
}

// PluginHealth is one plugin's line in server_health.
type PluginHealth struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Source   string `json:"source"`
	State    string `json:"state"`
	Status   string `json:"status"`
	Message  string `json:"message,omitempty"`
	Restarts int    `json:"restarts"`
	Tools    int    `json:"tools"`
	PID      int    `json:"pid,omitempty"`
	// SHA256 is the digest of the bytes a trusted or pinned plugin runs
	// (docs/decisions.md D36), so an upgrade can be seen to have landed.
	SHA256 string `json:"sha256,omitempty"`
	// LastExit and NextAttempt describe a crashing plugin between restarts
	// (crash loops back off, never give up).
	LastExit    string `json:"last_exit,omitempty"`
	NextAttempt string `json:"next_attempt,omitempty"`
	// Details is what the plugin reports about itself (its store, its
	// queues: sdd's pending_events and events_shed), so an operator sees a
	// backlog before it becomes a problem line. Its problems are lifted
	// into the report's problems instead.
	Details map[string]json.RawMessage `json:"details,omitempty"`
}

// EventsInfo reports the event bus.
type EventsInfo struct {
	Published   uint64 `json:"published"`
	Dropped     uint64 `json:"dropped"`
	Subscribers int    `json:"subscribers"`
}

// HealthOutput is server_health's output: the specification's fields plus
// plugins, problems, calls and events.
type HealthOutput struct {
	Status     string         `json:"status" jsonschema:"enum=ok,enum=degraded"`
	Mode       string         `json:"mode" jsonschema:"enum=FULL,enum=READONLY,enum=TEST,enum=MINIMAL"`
	UptimeMs   int64          `json:"uptime_ms"`
	DB         DBInfo         `json:"db"`
	Middleware MiddlewareInfo `json:"middleware"`
	Tools      ToolsInfo      `json:"tools"`
	Version    string         `json:"version"`
	Timestamp  string         `json:"timestamp"`
	Toolsets   []string       `json:"toolsets"`
	Plugins    []PluginHealth `json:"plugins"`
	Problems   []string       `json:"problems"`
	// Untrusted lists workspace plugins left unstarted until the operator
	// trusts them (docs/decisions.md D23), each with the command that does.
	Untrusted []trust.Untrusted `json:"untrusted,omitempty"`
	Calls     uint64            `json:"calls"`
	Events    EventsInfo        `json:"events"`
	// Cluster is the cluster bus, on PostgreSQL only: whether it follows
	// the other servers, what crossed it and its last error.
	Cluster *events.ClusterStats `json:"cluster,omitempty"`
}
