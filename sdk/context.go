package sdk

import (
	"context"
)

// Caller identifies who made a tool call (PRODUCT.md D4).
type Caller struct {
	// ID is the acting identity: CAIRN_AGENT_ID, else the MCP client's
	// name, else "unknown"; over authenticated HTTP, the API key's user.
	ID string
	// Source says where ID came from: "env", "client", "api_key", "unknown".
	Source string
	// SessionID is the MCP session.
	SessionID string
	// ClientName and ClientVersion come from the client's initialize.
	ClientName    string
	ClientVersion string
}

type ctxKey int

const (
	callerKey ctxKey = iota
	progressKey
	requestIDKey
)

// CallerFrom returns the caller of the tool call running in ctx.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey).(Caller); ok {
		return c
	}
	return Caller{ID: "unknown", Source: "unknown"}
}

// RequestID returns the host's id for the call running in ctx.
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey).(string)
	return s
}

// ProgressFunc receives progress reports.
type ProgressFunc func(progress, total float64, message string)

// ReportProgress sends a progress notification for the call running in ctx.
// total is 0 when unknown. It is a no-op when the client did not ask for
// progress, so handlers can call it unconditionally.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if f, ok := ctx.Value(progressKey).(ProgressFunc); ok && f != nil {
		f(progress, total, message)
	}
}

// WithCaller returns a context carrying the caller; useful in tests that call
// handlers through Plugin.Invoke.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey, c)
}

// WithProgress returns a context whose ReportProgress calls go to f.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey, f)
}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}
