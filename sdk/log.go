package sdk

import "context"

// The MCP log levels (RFC 5424 severities), lowest first.
const (
	LogDebug     = "debug"
	LogInfo      = "info"
	LogNotice    = "notice"
	LogWarning   = "warning"
	LogError     = "error"
	LogCritical  = "critical"
	LogAlert     = "alert"
	LogEmergency = "emergency"
)

var logRank = map[string]int{
	LogDebug: 0, LogInfo: 1, LogNotice: 2, LogWarning: 3,
	LogError: 4, LogCritical: 5, LogAlert: 6, LogEmergency: 7,
}

// LogFunc receives the log lines of a call that the client wants: level is
// an MCP level at or above the client's, data the notification's data.
type LogFunc func(level string, data any)

// requestLog is where a call's log lines go and the lowest level wanted.
type requestLog struct {
	min  int
	send LogFunc
}

// Log sends a log line about the call running in ctx to the client that
// made it, as notifications/message (on the call's own stream over HTTP).
// level is one of the Log* constants; an unknown level counts as info. The
// line goes out only when the client asked for that level or a lower one
// (logging/setLevel, or the request's _meta log level in protocol
// 2026-07-28); otherwise Log does nothing, so handlers may call it freely.
// data, when not empty, travels beside msg as {"message": msg, ...data};
// otherwise the line's data is msg alone.
//
// Log is for the caller; Plugin.Logger writes to the operator's log instead.
func Log(ctx context.Context, level, msg string, data map[string]any) {
	l, ok := ctx.Value(logKey).(requestLog)
	if !ok {
		return
	}
	rank, known := logRank[level]
	if !known {
		level, rank = LogInfo, logRank[LogInfo]
	}
	if rank < l.min {
		return
	}
	if len(data) == 0 {
		l.send(level, msg)
		return
	}
	line := make(map[string]any, len(data)+1)
	for k, v := range data {
		line[k] = v
	}
	line["message"] = msg
	l.send(level, line)
}

// WithLog returns a context whose Log calls at min or above go to f; the
// SDK sets it from the host's request, tests set it directly. An unknown
// min means the client wants no log lines, and Log stays silent.
func WithLog(ctx context.Context, min string, f LogFunc) context.Context {
	rank, known := logRank[min]
	if !known || f == nil {
		return ctx
	}
	return context.WithValue(ctx, logKey, requestLog{min: rank, send: f})
}
