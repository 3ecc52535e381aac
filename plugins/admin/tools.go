package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func notFound(field, what, id string) error {
	return errs.NotFoundf(errs.NotFound, field, "%s %s does not exist", what, id)
}

func caller(ctx context.Context) string { return sdk.CallerFrom(ctx).ID }

// managedKey loads a key the caller may manage: 404 when unknown, 403 when
// it is not the caller's own key (accounts.CanManageKey).
func managedKey(ctx context.Context, lib *accounts.Admin, id string) (*accounts.APIKey, error) {
	k, err := lib.GetAPIKeyByID(id)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, notFound("key_id", "API key", id)
	}
	if err := lib.CanManageKey(k, actor(ctx)); err != nil {
		return nil, err
	}
	return k, nil
}

// checkKeyOwner decides who a new key may be for (docs/decisions.md D35):
// the operator mints keys for anyone; a key only for its own user, never
// for a reserved identity, and scoped to a workspace only one its user
// belongs to. A workspace role never lets one user mint a key for another.
func checkKeyOwner(lib *accounts.Admin, by accounts.Actor, user, workspaceID string) error {
	if by.Operator {
		return nil
	}
	if err := accounts.RequireUnreserved("user_id", user, by); err != nil {
		return err
	}
	if user != by.ID {
		return accounts.Forbidden("self", "a key can create keys only for its own user (%s), not for %s: a key for %s comes from %s's own keys or the local operator (`cairn admin keys create --user %s`)", by.ID, user, user, user, user).With("field", "user_id")
	}
	if workspaceID == "" {
		return nil
	}
	return lib.RequireRole(workspaceID, by, accounts.RoleViewer)
}

// KeyIDInput names one API key.
type KeyIDInput struct {
	KeyID string `json:"key_id" jsonschema:"minLength=1,maxLength=64,description=API key id (key_…)"`
}

// KeyCreateInput is admin_key_create's input.
type KeyCreateInput struct {
	Name        string              `json:"name" jsonschema:"minLength=1,maxLength=255,description=What the key is for"`
	UserID      string              `json:"user_id,omitempty" jsonschema:"maxLength=255,description=User the key acts as (default: you)"`
	OrgID       string              `json:"org_id,omitempty" jsonschema:"maxLength=255"`
	WorkspaceID string              `json:"workspace_id,omitempty" jsonschema:"maxLength=64,description=Scope the key to a workspace"`
	Permissions []string            `json:"permissions,omitempty" jsonschema:"maxItems=64"`
	Scopes      []string            `json:"scopes,omitempty" jsonschema:"maxItems=64,description=Default read and write"`
	RateLimit   *accounts.RateLimit `json:"rate_limit,omitempty" jsonschema:"description=Requests per minute/hour/day (default 100/1000/10000)"`
	ExpiresAt   string              `json:"expires_at,omitempty" jsonschema:"description=ISO-8601 expiry in the future"`
	Metadata    map[string]any      `json:"metadata,omitempty"`
}

// KeyListInput is admin_key_list's input.
type KeyListInput struct {
	OrgID       string `json:"org_id,omitempty"`
	WorkspaceID string `json:"workspace_id,omitempty"`
	UserID      string `json:"user_id,omitempty"`
	Status      string `json:"status,omitempty" jsonschema:"enum=active,enum=rotating,enum=revoked,enum=expired"`
	Limit       int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset      int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// KeyList is admin_key_list's output.
type KeyList struct {
	Keys  []*accounts.APIKey `json:"keys"`
	Count int                `json:"count"`
}

// KeyUpdateInput is admin_key_update's input.
type KeyUpdateInput struct {
	KeyID       string              `json:"key_id" jsonschema:"minLength=1,maxLength=64"`
	Name        *string             `json:"name,omitempty" jsonschema:"minLength=1,maxLength=255"`
	Permissions []string            `json:"permissions,omitempty" jsonschema:"maxItems=64"`
	Scopes      []string            `json:"scopes,omitempty" jsonschema:"maxItems=64"`
	RateLimit   *accounts.RateLimit `json:"rate_limit,omitempty"`
	Status      *string             `json:"status,omitempty" jsonschema:"enum=active,enum=revoked,enum=expired"`
	Metadata    map[string]any      `json:"metadata,omitempty"`
}

// KeyRotateInput is admin_key_rotate's input.
type KeyRotateInput struct {
	KeyID         string `json:"key_id" jsonschema:"minLength=1,maxLength=64"`
	GracePeriodMs int64  `json:"grace_period_ms,omitempty" jsonschema:"minimum=0,maximum=604800000,description=Keep the old key valid this long (default 0: it stops at once)"`
}

// KeyValidateInput is admin_key_validate's input.
type KeyValidateInput struct {
	Key string `json:"key" jsonschema:"minLength=1,maxLength=200,description=Plaintext key to check"`
}

// KeyUsageInput is admin_key_usage's input.
type KeyUsageInput struct {
	KeyID string `json:"key_id" jsonschema:"minLength=1,maxLength=64"`
	Since string `json:"since,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$,description=First day (YYYY-MM-DD; default 29 days ago)"`
	Until string `json:"until,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$,description=Last day (YYYY-MM-DD; default today)"`
}

// KeyAuditInput is admin_key_audit_log's input.
type KeyAuditInput struct {
	KeyID  string `json:"key_id" jsonschema:"minLength=1,maxLength=64"`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// AuditLog is admin_key_audit_log's output.
type AuditLog struct {
	Entries []accounts.AuditEntry `json:"entries"`
	Count   int                   `json:"count"`
}

// keyTools registers the API-key tools.
func (a *Area) keyTools() {
	sdk.AddTools(a.p,
		a.keyCreate(),
		a.keyGet(),
		a.keyList(),
		a.keyUpdate(),
		a.keyRevoke(),
		a.keyRotate(),
		a.keyValidate(),
		a.keyCheckRateLimit(),
		a.keyUsage(),
		a.keyAuditLog(),
	)
}

// keyCreate declares admin_key_create.
func (a *Area) keyCreate() sdk.Tool[KeyCreateInput, *accounts.APIKey] {
	return sdk.Tool[KeyCreateInput, *accounts.APIKey]{
		Name:               "admin_key_create",
		HonoursIdempotency: true,
		Title:              "Create API key",
		Description:        "Issue an API key; its plaintext is in this result only, so store it now.",
		SuccessStatus:      201,
		Handler: keyed(a, "admin_key_create", secrets[KeyCreateInput](keyNotice, "plaintext_key"), func(ctx context.Context, in KeyCreateInput, c *store.Call) (*accounts.APIKey, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			user := in.UserID
			if user == "" {
				user = by.ID
			}
			if err := checkKeyOwner(lib, by, user, in.WorkspaceID); err != nil {
				return nil, err
			}
			scopes := in.Scopes
			if len(scopes) == 0 && !by.Operator {
				if scopes = accounts.CeilingScopes(by); len(scopes) == 0 {
					// The library would default to read and write.
					return nil, accounts.Forbidden("read", "your key holds neither read nor write, so a key it creates would have no scope; name the scopes").With("field", "scopes")
				}
			}
			if err := accounts.ScopeCeiling("scopes", scopes, by); err != nil {
				return nil, err
			}
			o := accounts.CreateAPIKeyOptions{Name: in.Name, OrgID: in.OrgID, UserID: user, Permissions: in.Permissions, Scopes: scopes,
				RateLimit: in.RateLimit, CreatedBy: by.ID, Metadata: in.Metadata}
			if in.WorkspaceID != "" {
				o.WorkspaceID = &in.WorkspaceID
			}
			if in.ExpiresAt != "" {
				o.ExpiresAt = &in.ExpiresAt
			}
			k, err := lib.Keyed(c).CreateAPIKey(o)
			a.published()
			return k, err
		}),
	}
}

// keyGet declares admin_key_get.
func (a *Area) keyGet() sdk.Tool[KeyIDInput, *accounts.APIKey] {
	return sdk.Tool[KeyIDInput, *accounts.APIKey]{
		Name: "admin_key_get", Title: "Get API key", ReadOnly: true, Idempotent: true,
		Description: "Show an API key's settings, status and usage (never the key itself).",
		Handler: func(ctx context.Context, in KeyIDInput) (*accounts.APIKey, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			return managedKey(ctx, lib, in.KeyID)
		},
	}
}

// keyList declares admin_key_list.
func (a *Area) keyList() sdk.Tool[KeyListInput, KeyList] {
	return sdk.Tool[KeyListInput, KeyList]{
		Name: "admin_key_list", Title: "List API keys", ReadOnly: true, Idempotent: true,
		Description: "List the API keys you may manage, newest first.",
		Handler: func(ctx context.Context, in KeyListInput) (KeyList, error) {
			lib, _, err := a.parts()
			if err != nil {
				return KeyList{}, err
			}
			o := accounts.ListAPIKeysOptions{OrgID: in.OrgID, WorkspaceID: in.WorkspaceID, UserID: in.UserID, Status: in.Status, Page: accounts.Page{Limit: in.Limit, Offset: in.Offset}}
			if by := actor(ctx); !by.Operator {
				// Only the caller's own keys (docs/decisions.md D35).
				o.Visible = func(k *accounts.APIKey) bool { return k.UserID == by.ID }
			}
			keys, err := lib.ListAPIKeys(o)
			if keys == nil {
				keys = []*accounts.APIKey{}
			}
			return KeyList{Keys: keys, Count: len(keys)}, err
		},
	}
}

// keyUpdate declares admin_key_update.
func (a *Area) keyUpdate() sdk.Tool[KeyUpdateInput, *accounts.APIKey] {
	return sdk.Tool[KeyUpdateInput, *accounts.APIKey]{
		Name: "admin_key_update", Title: "Update API key", HonoursIdempotency: true,
		Description: "Change an API key's name, permissions, scopes, rate limit, status or metadata.",
		Handler: keyed(a, "admin_key_update", nil, func(ctx context.Context, in KeyUpdateInput, c *store.Call) (*accounts.APIKey, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if _, err := managedKey(ctx, lib, in.KeyID); err != nil {
				return nil, err
			}
			if err := accounts.ScopeCeiling("scopes", in.Scopes, by); err != nil {
				return nil, err
			}
			k, err := lib.Keyed(c).UpdateAPIKey(in.KeyID, accounts.APIKeyUpdates{Name: in.Name, Permissions: in.Permissions, Scopes: in.Scopes, RateLimit: in.RateLimit, Status: in.Status, Metadata: in.Metadata, UpdatedBy: by.ID})
			if err == nil && k == nil {
				err = notFound("key_id", "API key", in.KeyID)
			}
			return k, err
		}),
	}
}

// keyRevoke declares admin_key_revoke.
func (a *Area) keyRevoke() sdk.Tool[KeyIDInput, *accounts.APIKey] {
	return sdk.Tool[KeyIDInput, *accounts.APIKey]{
		Name: "admin_key_revoke", Title: "Revoke API key", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Revoke an API key at once; later requests with it are refused.",
		Handler: keyed(a, "admin_key_revoke", nil, func(ctx context.Context, in KeyIDInput, c *store.Call) (*accounts.APIKey, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			if _, err := managedKey(ctx, lib, in.KeyID); err != nil {
				return nil, err
			}
			k, err := lib.Keyed(c).RevokeAPIKey(in.KeyID, caller(ctx))
			if err == nil && k == nil {
				err = notFound("key_id", "API key", in.KeyID)
			}
			a.published()
			return k, err
		}),
	}
}

// keyRotate declares admin_key_rotate.
func (a *Area) keyRotate() sdk.Tool[KeyRotateInput, *accounts.RotateResult] {
	return sdk.Tool[KeyRotateInput, *accounts.RotateResult]{
		Name: "admin_key_rotate", Title: "Rotate API key", Destructive: true, HonoursIdempotency: true,
		Description: "Replace a key with a new one (plaintext shown once), optionally keeping the old one valid for a grace period.",
		Handler: keyed(a, "admin_key_rotate", secrets[KeyRotateInput](keyNotice, "new_key.plaintext_key"), func(ctx context.Context, in KeyRotateInput, c *store.Call) (*accounts.RotateResult, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			old, err := lib.GetAPIKeyByID(in.KeyID)
			if err != nil {
				return nil, err
			}
			if old == nil {
				return nil, notFound("key_id", "API key", in.KeyID)
			}
			// A rotation mints a key for the old key's user.
			if err := accounts.RequireUnreserved("key_id", old.UserID, by); err != nil {
				return nil, err
			}
			if err := lib.CanManageKey(old, by); err != nil {
				return nil, err
			}
			if err := accounts.ScopeCeiling("key_id", old.Scopes, by); err != nil {
				return nil, err
			}
			r, err := lib.Keyed(c).RotateAPIKey(in.KeyID, accounts.RotateOptions{RotatedBy: by.ID, GracePeriodMs: in.GracePeriodMs})
			if err == nil && r == nil {
				err = notFound("key_id", "API key", in.KeyID)
			}
			a.published()
			return r, err
		}),
	}
}

// keyValidate declares admin_key_validate.
func (a *Area) keyValidate() sdk.Tool[KeyValidateInput, accounts.ValidationResult] {
	return sdk.Tool[KeyValidateInput, accounts.ValidationResult]{
		Name: "admin_key_validate", Title: "Validate API key", ReadOnly: true, Idempotent: true,
		Description: "Check a plaintext API key without counting a request.",
		Handler: func(_ context.Context, in KeyValidateInput) (accounts.ValidationResult, error) {
			lib, _, err := a.parts()
			if err != nil {
				return accounts.ValidationResult{}, err
			}
			return lib.ValidateAPIKey(in.Key)
		},
	}
}

// keyCheckRateLimit declares admin_key_check_rate_limit.
func (a *Area) keyCheckRateLimit() sdk.Tool[KeyIDInput, accounts.RateLimitResult] {
	return sdk.Tool[KeyIDInput, accounts.RateLimitResult]{
		Name: "admin_key_check_rate_limit", Title: "Count a request against a key's rate limits", HonoursIdempotency: true,
		Description: "Count one request against a key's minute, hour and day windows if all have room.",
		Handler: keyed(a, "admin_key_check_rate_limit", nil, func(ctx context.Context, in KeyIDInput, c *store.Call) (accounts.RateLimitResult, error) {
			lib, _, err := a.parts()
			if err != nil {
				return accounts.RateLimitResult{}, err
			}
			if _, err := managedKey(ctx, lib, in.KeyID); err != nil {
				return accounts.RateLimitResult{}, err
			}
			r, err := lib.Keyed(c).CheckRateLimit(in.KeyID)
			a.published()
			return r, err
		}),
	}
}

// keyUsage declares admin_key_usage.
func (a *Area) keyUsage() sdk.Tool[KeyUsageInput, *accounts.UsageReport] {
	return sdk.Tool[KeyUsageInput, *accounts.UsageReport]{
		Name: "admin_key_usage", Title: "API key usage", ReadOnly: true, Idempotent: true,
		Description: "Show a key's request totals, current windows and requests per day.",
		Handler: func(ctx context.Context, in KeyUsageInput) (*accounts.UsageReport, error) {
			lib, _, err := a.parts()
			if err != nil {
				return nil, err
			}
			if _, err := managedKey(ctx, lib, in.KeyID); err != nil {
				return nil, err
			}
			u, err := lib.GetAPIKeyUsage(in.KeyID, accounts.UsageOptions{Since: in.Since, Until: in.Until})
			if err == nil && u == nil {
				err = notFound("key_id", "API key", in.KeyID)
			}
			return u, err
		},
	}
}

// keyAuditLog declares admin_key_audit_log.
func (a *Area) keyAuditLog() sdk.Tool[KeyAuditInput, AuditLog] {
	return sdk.Tool[KeyAuditInput, AuditLog]{
		Name: "admin_key_audit_log", Title: "API key audit log", ReadOnly: true, Idempotent: true,
		Description: "Show who created, updated, rotated or revoked a key, and when.",
		Handler: func(ctx context.Context, in KeyAuditInput) (AuditLog, error) {
			lib, _, err := a.parts()
			if err != nil {
				return AuditLog{}, err
			}
			if _, err := managedKey(ctx, lib, in.KeyID); err != nil {
				return AuditLog{}, err
			}
			es, err := lib.GetAPIKeyAuditLog(in.KeyID, accounts.Page{Limit: in.Limit, Offset: in.Offset})
			if err == nil && es == nil {
				err = notFound("key_id", "API key", in.KeyID)
			}
			return AuditLog{Entries: es, Count: len(es)}, err
		},
	}
}
