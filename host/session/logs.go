package session

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

// sessionLogs sends the server's warnings to the sessions it serves: every
// session is on this server's workspace, so what goes wrong with a plugin, a
// skill file or a store concerns each of them (D21). Relayed sessions get
// the line on their relay's stderr; a session that asked with
// logging/setLevel gets it as notifications/message.
type sessionLogs struct {
	h        *Host
	mu       sync.RWMutex
	sessions map[*connSession]bool
}

func newSessionLogs(h *Host) *sessionLogs {
	return &sessionLogs{h: h, sessions: map[*connSession]bool{}}
}

func (l *sessionLogs) add(s *connSession) {
	l.mu.Lock()
	l.sessions[s] = true
	l.mu.Unlock()
}

func (l *sessionLogs) remove(s *connSession) {
	l.mu.Lock()
	delete(l.sessions, s)
	l.mu.Unlock()
}

// Accept implements hclog.SinkAdapter: the host's logger (and through it
// every plugin's) reports each line here.
func (l *sessionLogs) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	if level < hclog.Warn {
		return
	}
	l.mu.RLock()
	list := make([]*connSession, 0, len(l.sessions))
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
		if s.relayLog != nil {
			s.relayLog("cairn: " + text)
		}
		if want := s.GetLogLevel(); want != "" && levelRank(mlevel) >= levelRank(want) {
			n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationMessage),
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": mlevel, "logger": name, "data": text}},
			}}
			select {
			case s.notifications <- n:
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

// levelRank orders the MCP (syslog) levels.
func levelRank(l mcp.LoggingLevel) int {
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

// requestLog tells the client about the request it is making, at level: a
// 2026-07-28 request hears of it when its _meta named a log level at or
// below level, a 2025-11-25 session when logging/setLevel did. Nobody else
// hears of it, and the line is not even formatted then (tool calls are hot).
func (h *Host) requestLog(ctx context.Context, level mcp.LoggingLevel, format string, args ...any) {
	want := wantedLogLevel(ctx)
	if want == "" || !level.ShouldSendTo(want) {
		return
	}
	markNotified(ctx)
	err := h.mcp.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "cairn", fmt.Sprintf(format, args...)))
	if err != nil && !errors.Is(err, server.ErrNotificationNotInitialized) {
		h.log.Trace("log message not sent to the client", "error", err)
	}
}

// wantedLogLevel is the lowest level the client of the request in ctx wants
// to hear: the request's _meta log level in protocol 2026-07-28, else the
// session's from logging/setLevel; empty when it asked for none.
func wantedLogLevel(ctx context.Context) mcp.LoggingLevel {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel
	}
	if sl, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging); ok {
		return sl.GetLogLevel()
	}
	return ""
}

// sendCallLog sends a plugin's log line about the call in ctx to its client.
func (h *Host) sendCallLog(ctx context.Context, level, logger string, data json.RawMessage) {
	l := mcp.LoggingLevel(level)
	if l != mcp.LoggingLevelEmergency && levelRank(l) == levelRank(mcp.LoggingLevelEmergency) {
		l = mcp.LoggingLevelInfo // not a level: the plugin's SDK would have said info
	}
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data))
	}
	n := mcp.NewLoggingMessageNotification(l, logger, data)
	markNotified(ctx)
	if err := h.mcp.SendLogMessageToClient(ctx, n); err != nil && !errors.Is(err, server.ErrNotificationNotInitialized) {
		h.log.Trace("plugin log line not sent to the client", "error", err)
	}
}
