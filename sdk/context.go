package sdk

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Caller identifies who made a tool call (docs/decisions.md D4). It is
// the seam's type, the one the host sends.
type Caller = seam.Caller

type ctxKey int

const (
	callerKey ctxKey = iota
	progressKey
	requestIDKey
	idempotencyKey
	logKey
	clientKey
	toolCallerKey
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
// handlers through sdktest.Invoke.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey, c)
}

// WithProgress returns a context whose ReportProgress calls go to f.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey, f)
}

// Idempotency is the idempotency of the call running in ctx: its key,
// whether the key is the client's own (honoured 24 hours) or one the host
// derived for its replays, whether the call may already have run, and the
// call it names (set by the SDK before the handler runs).
type Idempotency = idempotency.Key

// IdempotencyOf returns the idempotency key of the call running in ctx. A
// tool declared with HonoursIdempotency records Key in the same transaction
// as its write and, when a call arrives with a key it has recorded, returns
// the recorded outcome instead of writing again.
func IdempotencyOf(ctx context.Context) Idempotency {
	v, _ := ctx.Value(idempotencyKey).(Idempotency)
	return v
}

// WithIdempotency returns a context carrying an idempotency key (the SDK
// sets it from the host's request; tests set it directly).
func WithIdempotency(ctx context.Context, v Idempotency) context.Context {
	return context.WithValue(ctx, idempotencyKey, v)
}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}
