package admin

import (
	"context"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// AuthenticateInput is admin_key_authenticate's input.
type AuthenticateInput struct {
	Key string `json:"key" jsonschema:"minLength=1,maxLength=200,description=The plaintext API key an HTTP caller presented"`
}

// Authenticated is admin_key_authenticate's output: the principal of the
// HTTP caller and the state of its rate-limit windows after counting this
// request.
type Authenticated struct {
	UserID        string                   `json:"user_id"`
	KeyID         string                   `json:"key_id"`
	Scopes        []string                 `json:"scopes"`
	WorkspaceID   *string                  `json:"workspace_id" jsonschema:"oneof_type=string;null"`
	Status        string                   `json:"status" jsonschema:"enum=active,enum=rotating"`
	InGracePeriod bool                     `json:"in_grace_period"`
	GraceEndsAt   *string                  `json:"grace_ends_at" jsonschema:"oneof_type=string;null"`
	RateLimit     accounts.RateLimitResult `json:"rate_limit"`
}

// authenticate validates a key and counts one request against its rate
// limits, as HTTP authentication needs: 401 ERR_UNAUTHORIZED (details.reason
// malformed, unknown, revoked or expired) or 429 ERR_RATE_LIMITED
// (details.retry_after_ms, window, retry_at).
func authenticate(lib *accounts.Admin, key string, now time.Time) (Authenticated, error) {
	v, err := lib.ValidateAPIKey(key)
	if err != nil {
		return Authenticated{}, err
	}
	if !v.Valid {
		return Authenticated{}, errs.Newf(401, errs.Unauthorized, "the API key is %s; create a new one with `cairn admin keys create`", v.Reason).With("reason", v.Reason)
	}
	rl, err := lib.CheckRateLimit(v.APIKey.ID)
	if err != nil {
		return Authenticated{}, err
	}
	if !rl.Allowed {
		window := strings.Join(rl.LimitedBy, "+")
		reset, _ := accounts.ParseTime(rl.RetryAt)
		ms := max(reset.Sub(now).Milliseconds(), 1)
		return Authenticated{}, errs.Newf(429, errs.RateLimited, "this API key's %s rate limit is exhausted; retry after %s", window, rl.RetryAt).
			With("retry_after_ms", ms).With("window", window).With("retry_at", rl.RetryAt)
	}
	k := v.APIKey
	return Authenticated{UserID: k.UserID, KeyID: k.ID, Scopes: k.Scopes, WorkspaceID: k.WorkspaceID, Status: k.Status,
		InGracePeriod: v.InGracePeriod, GraceEndsAt: k.GraceEndsAt, RateLimit: rl}, nil
}

func (a *Area) internalTools() {
	sdk.AddTool(a.p, sdk.Tool[AuthenticateInput, Authenticated]{
		Name: "admin_key_authenticate", Title: "Authenticate an API key", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): validates an HTTP caller's API key and counts the request against its minute, hour and day windows in one step. Returns the key's user, id, scopes and windows, or 401 ERR_UNAUTHORIZED (details.reason) / 429 ERR_RATE_LIMITED (details.retry_after_ms).",
		Handler: func(ctx context.Context, in AuthenticateInput) (Authenticated, error) {
			lib, _, err := a.parts()
			if err != nil {
				return Authenticated{}, err
			}
			if err := requireOperator(actor(ctx), "", "admin_key_authenticate (the host's own authentication call)"); err != nil {
				return Authenticated{}, err
			}
			out, err := authenticate(lib, in.Key, time.Now())
			a.published() // usage.threshold_exceeded
			return out, err
		},
	})
}
