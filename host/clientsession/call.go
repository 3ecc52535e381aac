package clientsession

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
)

// Call is what a byte-stream transport knows of the request being handled,
// for the tool handler: the JSON-RPC id that, with the session's key, is
// the call's idempotency key (docs/decisions.md D32), and whether it is a
// replay after the daemon was lost.
type Call struct {
	ID     string
	Key    string
	Replay bool
	// Notified is set once a notification about this request (its
	// progress, its log lines) was sent; nil when nobody needs to know.
	Notified *atomic.Bool
}

type callKey struct{}

// WithCall returns a context carrying c.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf returns the Call in ctx, if a transport put one there.
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}

// MarkNotified records that a notification about the request in ctx was
// queued: its answer must then follow it through the session's writer.
func MarkNotified(ctx context.Context) {
	if c, ok := CallOf(ctx); ok && c.Notified != nil {
		c.Notified.Store(true)
	}
}

// NewKey is 128 random bits in hex: a session's key when its transport
// brings none, or a call's when nothing else names it.
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
