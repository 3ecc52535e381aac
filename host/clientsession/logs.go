package clientsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Listener is a session that hears the server's warnings.
type Listener interface {
	// RelayLog puts a line on the session's relay's stderr; a session
	// without a relay drops it.
	RelayLog(text string)
	// GetLogLevel is the level logging/setLevel asked for; empty: none.
	GetLogLevel() mcp.LoggingLevel
	NotificationChannel() chan<- mcp.JSONRPCNotification
}

// Logs sends the server's warnings to the sessions it serves: every
// session is on this server's workspace, so what goes wrong with a plugin, a
// skill file or a store concerns each of them (D21). Relayed sessions get
// the line on their relay's stderr; a session that asked with
// logging/setLevel gets it as notifications/message.
type Logs struct {
	mu       sync.RWMutex
	sessions map[Listener]bool
}

// NewLogs returns a fan-out with no sessions yet.
func NewLogs() *Logs {
	return &Logs{sessions: map[Listener]bool{}}
}

// Add makes s hear the server's warnings until Remove.
func (l *Logs) Add(s Listener) {
	l.mu.Lock()
	l.sessions[s] = true
	l.mu.Unlock()
}

// Remove ends what Add started.
func (l *Logs) Remove(s Listener) {
	l.mu.Lock()
	delete(l.sessions, s)
	l.mu.Unlock()
}

// Accept implements hclog.SinkAdapter: the host's logger (and through it
// every plugin's) reports each line here.
func (l *Logs) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	if level < hclog.Warn {
		return
	}
	l.mu.RLock()
	list := make([]Listener, 0, len(l.sessions))
	for s := range l.sessions {
		list = append(list, s)
	}
	l.mu.RUnlock()
	if len(list) == 0 {
		return
	}
	text := formatLogLine(name, level, msg, args)
	mlevel := mcpLevel(level)
	for _, s := range list {
		s.RelayLog("cairn: " + text)
		if want := s.GetLogLevel(); want != "" && LevelRank(mlevel) >= LevelRank(want) {
			n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationMessage),
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": mlevel, "logger": name, "data": text}},
			}}
			select {
			case s.NotificationChannel() <- n:
			default:
			}
		}
	}
}

// formatLogLine renders a log line as one readable line.
func formatLogLine(name string, level hclog.Level, msg string, args []interface{}) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s", strings.ToUpper(level.String()), name, msg)
	kv := map[string]string{}
	var keys []string
	for i := 0; i+1 < len(args); i += 2 {
		k := fmt.Sprint(args[i])
		if _, dup := kv[k]; !dup {
			keys = append(keys, k)
		}
		kv[k] = fmt.Sprint(args[i+1])
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, kv[k])
	}
	return b.String()
}

func mcpLevel(l hclog.Level) mcp.LoggingLevel {
	switch {
	case l >= hclog.Error:
		return mcp.LoggingLevelError
	case l >= hclog.Warn:
		return mcp.LoggingLevelWarning
	case l >= hclog.Info:
		return mcp.LoggingLevelInfo
	default:
		return mcp.LoggingLevelDebug
	}
}

// LevelRank orders the MCP (syslog) levels; anything that is not one ranks
// as emergency.
func LevelRank(l mcp.LoggingLevel) int {
	switch l {
	case mcp.LoggingLevelDebug:
		return 0
	case mcp.LoggingLevelInfo:
		return 1
	case mcp.LoggingLevelNotice:
		return 2
	case mcp.LoggingLevelWarning:
		return 3
	case mcp.LoggingLevelError:
		return 4
	case mcp.LoggingLevelCritical:
		return 5
	case mcp.LoggingLevelAlert:
		return 6
	default:
		return 7
	}
}

// RequestLog tells the client about the request it is making, at level: a
// 2026-07-28 request hears of it when its _meta named a log level at or
// below level, a 2025-11-25 session when logging/setLevel did. Nobody else
// hears of it, and the line is not even formatted then (tool calls are hot).
func RequestLog(ctx context.Context, srv *server.MCPServer, log hclog.Logger, level mcp.LoggingLevel, format string, args ...any) {
	want := WantedLogLevel(ctx)
	if want == "" || !level.ShouldSendTo(want) {
		return
	}
	MarkNotified(ctx)
	err := srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "cairn", fmt.Sprintf(format, args...)))
	if err != nil && !errors.Is(err, server.ErrNotificationNotInitialized) {
		log.Trace("log message not sent to the client", "error", err)
	}
}

// WantedLogLevel is the lowest level the client of the request in ctx wants
// to hear: the request's _meta log level in protocol 2026-07-28, else the
// session's from logging/setLevel; empty when it asked for none.
func WantedLogLevel(ctx context.Context) mcp.LoggingLevel {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel
	}
	if sl, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging); ok {
		return sl.GetLogLevel()
	}
	return ""
}

// SendCallLog sends a plugin's log line about the call in ctx to its client.
func SendCallLog(ctx context.Context, srv *server.MCPServer, log hclog.Logger, level, logger string, data json.RawMessage) {
	l := mcp.LoggingLevel(level)
	if l != mcp.LoggingLevelEmergency && LevelRank(l) == LevelRank(mcp.LoggingLevelEmergency) {
		l = mcp.LoggingLevelInfo // not a level: the plugin's SDK would have said info
	}
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data))
	}
	n := mcp.NewLoggingMessageNotification(l, logger, data)
	MarkNotified(ctx)
	if err := srv.SendLogMessageToClient(ctx, n); err != nil && !errors.Is(err, server.ErrNotificationNotInitialized) {
		log.Trace("plugin log line not sent to the client", "error", err)
	}
}

// SettingsWarnings are the log messages telling a session's client what
// was wrong in the session's settings (docs/decisions.md D21), sent after
// its initialize answer: logging may precede the initialized notification.
func SettingsWarnings(s *Settings) []mcp.JSONRPCNotification {
	if s == nil {
		return nil
	}
	out := make([]mcp.JSONRPCNotification, 0, len(s.Warnings))
	for _, w := range s.Warnings {
		out = append(out, mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationMessage),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": mcp.LoggingLevelWarning, "logger": "cairn", "data": w}},
		}})
	}
	return out
}
