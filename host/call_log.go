package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/session"
)

// requestLog tells the client about the request it is making, at level: a
// 2026-07-28 request hears of it when its _meta named a log level at or
// below level, a 2025-11-25 session when logging/setLevel did. Nobody else
// hears of it, and the line is not even formatted then (tool calls are hot).
func (h *Host) requestLog(ctx context.Context, level mcp.LoggingLevel, format string, args ...any) {
	want := wantedLogLevel(ctx)
	if want == "" || !level.ShouldSendTo(want) {
		return
	}
	session.MarkNotified(ctx)
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
	if l != mcp.LoggingLevelEmergency && session.LevelRank(l) == session.LevelRank(mcp.LoggingLevelEmergency) {
		l = mcp.LoggingLevelInfo // not a level: the plugin's SDK would have said info
	}
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data))
	}
	n := mcp.NewLoggingMessageNotification(l, logger, data)
	session.MarkNotified(ctx)
	if err := h.mcp.SendLogMessageToClient(ctx, n); err != nil && !errors.Is(err, server.ErrNotificationNotInitialized) {
		h.log.Trace("plugin log line not sent to the client", "error", err)
	}
}
