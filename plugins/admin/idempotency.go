package admin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Notices that replace a secret in a repeat's answer once
// store.SecretWindow has passed.
const (
	keyNotice     = "the plaintext key was shown once, in the first answer to this call, and is no longer kept; rotate the key (admin_key_rotate) to get a new one"
	inviteNotice  = "the invitation token was shown once, in the first answer to this call, and is no longer kept; revoke this invitation and create a new one to get a new token"
	webhookNotice = "the signing secret was shown once, in the first answer to this call, and is no longer kept; rotate it (admin_webhook_rotate_secret) to get a new one"
)

// keyed makes a write tool honour the call's idempotency key
// (docs/decisions.md D42). With a key, a call recorded before answers its
// recorded outcome before any check runs (the first call may have changed
// what the checks would find: a deleted project); otherwise h runs with
// the Call, which it hands to the library (accounts.Admin.Keyed,
// webhooks.Manager.Keyed) so the write and its record commit together. A
// repeat racing the first call finds the record in its transaction, and
// its answer is the recorded one too. Without a key h runs as before.
// prepare, when set, names the outcome's secrets or how the library's
// result becomes the tool's output.
func keyed[In, Out any](a *Area, tool string, prepare func(c *store.Call, in In), h func(ctx context.Context, in In, c *store.Call) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		var zero Out
		c := store.NewCall(sdk.IdempotencyOf(ctx))
		if prepare != nil {
			prepare(c, in)
		}
		if c.Keyed() {
			a.mu.RLock()
			st := a.st
			a.mu.RUnlock()
			if st != nil {
				raw, found, err := st.Lookup(c, time.Now())
				if err != nil {
					return zero, storeErr(err)
				}
				if found {
					return recorded[Out](tool, raw)
				}
			}
		}
		out, err := h(ctx, in, c)
		if raw := c.Replayed(); raw != nil {
			return recorded[Out](tool, raw)
		}
		return out, err
	}
}

func recorded[Out any](tool string, raw json.RawMessage) (Out, error) {
	var out Out
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, errs.Newf(500, errs.Internal, "the recorded outcome of this %s call cannot be read: %v", tool, err)
	}
	return out, nil
}

func storeErr(err error) error {
	if _, ok := errs.As(err); ok {
		return err
	}
	return errs.Newf(500, errs.Internal, "admin store: %v", err)
}

// secrets names an outcome's secrets for keyed.
func secrets[In any](notice string, paths ...string) func(c *store.Call, in In) {
	return func(c *store.Call, _ In) { c.Secrets(notice, paths...) }
}
