package httpserve

import (
	"context"
	"net/http"
)

// idempotencyKey carries an HTTP request's Idempotency-Key header.
type idempotencyKey struct{}

// WithIdempotencyKey puts r's Idempotency-Key header, if any, in its
// context for the tool handler (docs/decisions.md D32).
func WithIdempotencyKey(r *http.Request) *http.Request {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), idempotencyKey{}, k))
}

// IdempotencyKey returns the Idempotency-Key header of the request in ctx.
func IdempotencyKey(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idempotencyKey{}).(string)
	return k, ok
}
