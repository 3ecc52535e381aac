package accounts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// API key statuses (specification part 3). KeyRotating is cairn's: a key
// replaced by RotateAPIKey with a grace period, still valid until its
// grace_ends_at and revoked from then on.
const (
	KeyActive   = "active"
	KeyRotating = "rotating"
	KeyRevoked  = "revoked"
	KeyExpired  = "expired"
)

// Validation failure reasons of ValidateAPIKey.
const (
	ReasonMalformed = "malformed"
	ReasonUnknown   = "unknown"
	ReasonRevoked   = "revoked"
	ReasonExpired   = "expired"
)

// Key events (specification part 6).
const (
	EventKeyCreated = "api_key.created"
	EventKeyRotated = "api_key.rotated"
	EventKeyRevoked = "api_key.revoked"
)

// MaxGracePeriod caps RotateAPIKey's grace period.
const MaxGracePeriod = 7 * 24 * time.Hour

// keyPattern is the plaintext format: a prefix, "_", 64 lowercase hex. Any
// well-formed prefix passes the format check, so changing the configured
// prefix does not make existing keys malformed; the hash lookup decides.
// Compiled on first use, not in package init, which every cairn process runs.
var keyPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{0,15}_[0-9a-f]{64}$`) })

// RateLimit is a key's allowance per window.
type RateLimit struct {
	PerMinute int `json:"per_minute"`
	PerHour   int `json:"per_hour"`
	PerDay    int `json:"per_day"`
}

// DefaultRateLimit is 100 per minute, 1000 per hour, 10000 per day.
var DefaultRateLimit = RateLimit{PerMinute: 100, PerHour: 1000, PerDay: 10000}

// Usage is a key's usage counters.
type Usage struct {
	TotalRequests int64   `json:"total_requests"`
	LastUsedAt    *string `json:"last_used_at" jsonschema:"oneof_type=string;null"`
}

// APIKey is an API key. The plaintext is never stored; PlaintextKey is set
// only on the values CreateAPIKey and RotateAPIKey return, and KeyHash
// never appears in its JSON unless ToJSON(true) asks for it.
type APIKey struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	KeyHash     string    `json:"-"`
	KeyPreview  string    `json:"key_preview"`
	OrgID       string    `json:"org_id"`
	WorkspaceID *string   `json:"workspace_id" jsonschema:"oneof_type=string;null"`
	UserID      string    `json:"user_id"`
	Permissions []string  `json:"permissions"`
	Scopes      []string  `json:"scopes"`
	RateLimit   RateLimit `json:"rate_limit"`
	Usage       Usage     `json:"usage"`
	// Status is active, rotating (replaced, valid until GraceEndsAt),
	// revoked or expired.
	Status      string  `json:"status"`
	ExpiresAt   *string `json:"expires_at" jsonschema:"oneof_type=string;null"`
	LastUsedAt  *string `json:"last_used_at" jsonschema:"oneof_type=string;null"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	CreatedBy   string  `json:"created_by"`
	RotatedFrom *string `json:"rotated_from" jsonschema:"oneof_type=string;null"`
	RevokedAt   *string `json:"revoked_at" jsonschema:"oneof_type=string;null"`
	RevokedBy   *string `json:"revoked_by" jsonschema:"oneof_type=string;null"`
	// GraceEndsAt is when a rotated key stops validating; null unless the
	// rotation granted a grace period.
	GraceEndsAt  *string        `json:"grace_ends_at" jsonschema:"oneof_type=string;null"`
	Metadata     map[string]any `json:"metadata"`
	PlaintextKey string         `json:"plaintext_key,omitempty"`
	// SecretNotice replaces PlaintextKey in a repeat of a keyed call made
	// after the plaintext was dropped: it says how to get a new key.
	SecretNotice string `json:"secret_notice,omitempty"`
}

// storedKey is the on-disk form: the key plus its hash.
type storedKey struct {
	APIKey
	KeyHash string `json:"key_hash"`
	// LegacyGraceUntil is how stores written before the rotating status
	// recorded a grace period (status revoked plus grace_until).
	LegacyGraceUntil *string `json:"grace_until,omitempty"`
}

// ToJSON encodes the key; the hash is included only when includeSensitive
// is true (specification: toJSON(includeSensitive)).
func (k APIKey) ToJSON(includeSensitive bool) ([]byte, error) {
	if !includeSensitive {
		return json.Marshal(k)
	}
	return json.Marshal(storedKey{APIKey: k, KeyHash: k.KeyHash})
}

// HashKey is the SHA-256 of a plaintext key, lowercase hex: the only form
// in which keys are stored and looked up.
func HashKey(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

// CheckKeyFormat reports whether s has the API key format.
func CheckKeyFormat(s string) bool { return keyPattern().MatchString(s) }

// preview shows the prefix and the last four characters, enough to tell
// keys apart without revealing them.
func preview(plaintext string) string {
	i := bytes.IndexByte([]byte(plaintext), '_')
	return plaintext[:i+1] + "…" + plaintext[len(plaintext)-4:]
}

// CreateAPIKeyOptions are createApiKey's parameters. Name and UserID are
// required; everything else has a default.
type CreateAPIKeyOptions struct {
	Name        string         `json:"name"`
	OrgID       string         `json:"org_id,omitempty"`
	WorkspaceID *string        `json:"workspace_id,omitempty"`
	UserID      string         `json:"user_id"`
	Permissions []string       `json:"permissions,omitempty"`
	Scopes      []string       `json:"scopes,omitempty"`
	RateLimit   *RateLimit     `json:"rate_limit,omitempty"`
	ExpiresAt   *string        `json:"expires_at,omitempty"`
	CreatedBy   string         `json:"created_by,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

func checkRateLimit(field string, r RateLimit) error {
	for _, w := range []struct {
		name string
		v    int
	}{{"per_minute", r.PerMinute}, {"per_hour", r.PerHour}, {"per_day", r.PerDay}} {
		if w.v < 1 || w.v > 100_000_000 {
			return errs.Invalidf(field+"."+w.name, "minimum", "%s.%s must be between 1 and 100000000 (got %d)", field, w.name, w.v)
		}
	}
	return nil
}

func checkScopes(field string, s []string) error { return checkStrings(field, s, 64, 128) }

// CreateAPIKey issues a key. The returned key carries PlaintextKey; it is
// the only time the plaintext exists outside the caller.
func (a *Admin) CreateAPIKey(o CreateAPIKeyOptions) (*APIKey, error) {
	if err := checkLen("name", o.Name, 1, 255); err != nil {
		return nil, err
	}
	if err := checkLen("user_id", o.UserID, 1, 255); err != nil {
		return nil, err
	}
	if err := checkLen("org_id", o.OrgID, 0, 255); err != nil {
		return nil, err
	}
	if err := checkScopes("permissions", o.Permissions); err != nil {
		return nil, err
	}
	if err := checkScopes("scopes", o.Scopes); err != nil {
		return nil, err
	}
	rl := DefaultRateLimit
	if o.RateLimit != nil {
		if err := checkRateLimit("rate_limit", *o.RateLimit); err != nil {
			return nil, err
		}
		rl = *o.RateLimit
	}
	now := a.now()
	var expires *string
	if o.ExpiresAt != nil && *o.ExpiresAt != "" {
		t, err := ParseTime(*o.ExpiresAt)
		if err != nil {
			return nil, errs.Invalidf("expires_at", "format", "expires_at must be an ISO-8601 date-time such as 2027-01-31T00:00:00.000Z (got %q)", *o.ExpiresAt)
		}
		if !t.After(now) {
			return nil, errs.Invalid("expires_at", "future", "expires_at must be in the future")
		}
		s := FormatTime(t)
		expires = &s
	}
	if err := checkMetadata("metadata", o.Metadata); err != nil {
		return nil, err
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = []string{"read", "write"}
	}
	createdBy := o.CreatedBy
	if createdBy == "" {
		createdBy = o.UserID
	}
	var out *APIKey
	err := update(a, &out, func(tx store.Tx) error {
		if o.WorkspaceID != nil && *o.WorkspaceID != "" {
			ws, err := getWorkspace(tx, *o.WorkspaceID)
			if err != nil {
				return err
			}
			if ws == nil {
				return errs.NotFoundf(errs.NotFound, "workspace_id", "workspace %s does not exist", *o.WorkspaceID)
			}
		}
		k := a.mint(now, o.Name, o.OrgID, o.WorkspaceID, o.UserID, o.Permissions, scopes, rl, expires, createdBy, o.Metadata)
		if err := a.putKey(tx, k, true); err != nil {
			return err
		}
		if err := a.audit(tx, k.ID, "created", createdBy, nil); err != nil {
			return err
		}
		out = k
		return a.event(tx, EventKeyCreated, keyEvent(k))
	})
	return out, internal(err)
}

func (a *Admin) mint(now time.Time, name, org string, ws *string, user string, perms, scopes []string, rl RateLimit, expires *string, by string, meta map[string]any) *APIKey {
	plaintext := a.prefix + "_" + randomHex(32)
	if ws != nil && *ws == "" {
		ws = nil
	}
	ts := FormatTime(now)
	return &APIKey{
		ID: newID("key"), Name: name, KeyHash: HashKey(plaintext), KeyPreview: preview(plaintext),
		OrgID: org, WorkspaceID: ws, UserID: user, Permissions: orNone(perms), Scopes: orNone(scopes),
		RateLimit: rl, Status: KeyActive, ExpiresAt: expires, CreatedAt: ts, UpdatedAt: ts, CreatedBy: by,
		Metadata: orEmpty(meta), PlaintextKey: plaintext,
	}
}

func keyEvent(k *APIKey) map[string]any {
	m := map[string]any{"key_id": k.ID, "name": k.Name, "key_preview": k.KeyPreview, "user_id": k.UserID, "org_id": k.OrgID, "status": k.Status}
	if k.WorkspaceID != nil {
		m["workspace_id"] = *k.WorkspaceID
	}
	return m
}

// putKey stores k (never its plaintext); index adds the hash lookup.
func (a *Admin) putKey(tx store.Tx, k *APIKey, index bool) error {
	sk := storedKey{APIKey: *k, KeyHash: k.KeyHash}
	sk.PlaintextKey = ""
	sk.Usage = Usage{}
	sk.LastUsedAt = nil
	if err := store.Put(tx, store.BucketKeys, []byte(k.ID), sk); err != nil {
		return err
	}
	if index {
		return tx.Bucket([]byte(store.BucketKeyHash)).Put([]byte(k.KeyHash), []byte(k.ID))
	}
	return nil
}

// loadKey reads a key with its usage and its effective status (an active
// key past expires_at reads as expired).
func (a *Admin) loadKey(tx store.Tx, id string) (*APIKey, error) {
	var sk storedKey
	found, err := store.Get(tx, store.BucketKeys, []byte(id), &sk)
	if err != nil || !found {
		return nil, err
	}
	k := sk.APIKey
	k.KeyHash = sk.KeyHash
	u, err := a.usage.read(tx, id)
	if err != nil {
		return nil, err
	}
	k.Usage = Usage{TotalRequests: u.Total}
	if u.LastUsedAt != "" {
		s := u.LastUsedAt
		k.LastUsedAt, k.Usage.LastUsedAt = &s, &s
	}
	if sk.LegacyGraceUntil != nil && k.GraceEndsAt == nil && k.Status == KeyRevoked {
		k.Status, k.GraceEndsAt, k.RevokedAt = KeyRotating, sk.LegacyGraceUntil, nil
	}
	if k.Status == KeyRotating && !a.inGrace(&k) {
		// The grace period is over: the key reads as revoked from its end.
		k.Status = KeyRevoked
		if k.RevokedAt == nil {
			k.RevokedAt = k.GraceEndsAt
		}
	}
	if (k.Status == KeyActive || k.Status == KeyRotating) && a.expired(&k) {
		k.Status = KeyExpired
	}
	return &k, nil
}

// inGrace reports whether a rotated key's grace period is still running.
func (a *Admin) inGrace(k *APIKey) bool {
	if k.GraceEndsAt == nil {
		return false
	}
	t, err := ParseTime(*k.GraceEndsAt)
	return err == nil && a.now().Before(t)
}

func (a *Admin) expired(k *APIKey) bool {
	if k.ExpiresAt == nil {
		return false
	}
	t, err := ParseTime(*k.ExpiresAt)
	return err == nil && !a.now().Before(t)
}

// GetAPIKeyByID returns the key or nil.
func (a *Admin) GetAPIKeyByID(id string) (*APIKey, error) {
	var out *APIKey
	err := a.st.View(func(tx store.Tx) error {
		k, err := a.loadKey(tx, id)
		out = k
		return err
	})
	return out, internal(err)
}

// GetAPIKeyByHash returns the valid key (active, or rotating inside its
// grace period) with this SHA-256 hash (lowercase hex), or nil: the lookup
// used for authentication.
func (a *Admin) GetAPIKeyByHash(keyHash string) (*APIKey, error) {
	var out *APIKey
	err := a.st.View(func(tx store.Tx) error {
		id := tx.Bucket([]byte(store.BucketKeyHash)).Get([]byte(keyHash))
		if id == nil {
			return nil
		}
		k, err := a.loadKey(tx, string(id))
		if err == nil && k != nil && (k.Status == KeyActive || k.Status == KeyRotating) {
			out = k
		}
		return err
	})
	return out, internal(err)
}

// ValidationResult is validateApiKey's result: {valid:true, apiKey} or
// {valid:false, reason}.
type ValidationResult struct {
	Valid  bool    `json:"valid"`
	APIKey *APIKey `json:"api_key,omitempty"`
	Reason string  `json:"reason,omitempty"`
	// InGracePeriod is true for a rotated key still inside the grace
	// period its rotation granted (status rotating).
	InGracePeriod bool `json:"in_grace_period,omitempty"`
}

// ValidateAPIKey checks a plaintext key: its format first (no lookup for a
// malformed key), then the hash lookup, then status and expiry. A rotated
// key is valid only inside the grace period its rotation asked for.
func (a *Admin) ValidateAPIKey(plaintext string) (ValidationResult, error) {
	if !CheckKeyFormat(plaintext) {
		return ValidationResult{Reason: ReasonMalformed}, nil
	}
	hash := HashKey(plaintext)
	var res ValidationResult
	err := a.st.View(func(tx store.Tx) error {
		id := tx.Bucket([]byte(store.BucketKeyHash)).Get([]byte(hash))
		if id == nil {
			res.Reason = ReasonUnknown
			return nil
		}
		k, err := a.loadKey(tx, string(id))
		if err != nil {
			return err
		}
		if k == nil {
			res.Reason = ReasonUnknown
			return nil
		}
		switch k.Status {
		case KeyActive:
			res = ValidationResult{Valid: true, APIKey: k}
		case KeyRotating:
			res = ValidationResult{Valid: true, APIKey: k, InGracePeriod: true}
		case KeyExpired:
			res.Reason = ReasonExpired
		default:
			res.Reason = ReasonRevoked
		}
		return nil
	})
	return res, internal(err)
}

// ListAPIKeysOptions filter listApiKeys.
type ListAPIKeysOptions struct {
	OrgID       string `json:"org_id,omitempty"`
	WorkspaceID string `json:"workspace_id,omitempty"`
	UserID      string `json:"user_id,omitempty"`
	Status      string `json:"status,omitempty"`
	// Visible, when set, keeps only the keys it accepts (before paging):
	// how a caller sees only the keys it may manage.
	Visible func(k *APIKey) bool `json:"-"`
	Page
}

// ListAPIKeys lists keys, newest first.
func (a *Admin) ListAPIKeys(o ListAPIKeysOptions) ([]*APIKey, error) {
	p, err := o.Page.check()
	if err != nil {
		return nil, err
	}
	if o.Status != "" && o.Status != KeyActive && o.Status != KeyRotating && o.Status != KeyRevoked && o.Status != KeyExpired {
		return nil, errs.Invalidf("status", "enum", "status must be one of active, rotating, revoked, expired (got %q)", o.Status)
	}
	var all []*APIKey
	err = a.st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketKeys)).ForEach(func(k, _ []byte) error {
			key, err := a.loadKey(tx, string(k))
			if err != nil || key == nil {
				return err
			}
			if (o.OrgID != "" && key.OrgID != o.OrgID) || (o.UserID != "" && key.UserID != o.UserID) ||
				(o.Status != "" && key.Status != o.Status) ||
				(o.WorkspaceID != "" && (key.WorkspaceID == nil || *key.WorkspaceID != o.WorkspaceID)) ||
				(o.Visible != nil && !o.Visible(key)) {
				return nil
			}
			all = append(all, key)
			return nil
		})
	})
	if err != nil {
		return nil, internal(err)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].CreatedAt != all[j].CreatedAt {
			return all[i].CreatedAt > all[j].CreatedAt
		}
		return all[i].ID < all[j].ID
	})
	return paginate(all, p), nil
}

// APIKeyUpdates are updateApiKey's allowed fields; nil leaves a field.
type APIKeyUpdates struct {
	Name        *string        `json:"name,omitempty"`
	Permissions []string       `json:"permissions,omitempty"`
	Scopes      []string       `json:"scopes,omitempty"`
	RateLimit   *RateLimit     `json:"rate_limit,omitempty"`
	Status      *string        `json:"status,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// UpdatedBy is recorded in the audit log.
	UpdatedBy string `json:"updated_by,omitempty"`
}

// UpdateAPIKey changes the allowed fields; nil for an unknown key.
func (a *Admin) UpdateAPIKey(id string, u APIKeyUpdates) (*APIKey, error) {
	if u.Name != nil {
		if err := checkLen("name", *u.Name, 1, 255); err != nil {
			return nil, err
		}
	}
	if u.Permissions != nil {
		if err := checkScopes("permissions", u.Permissions); err != nil {
			return nil, err
		}
	}
	if u.Scopes != nil {
		if err := checkScopes("scopes", u.Scopes); err != nil {
			return nil, err
		}
	}
	if u.RateLimit != nil {
		if err := checkRateLimit("rate_limit", *u.RateLimit); err != nil {
			return nil, err
		}
	}
	if u.Status != nil && *u.Status != KeyActive && *u.Status != KeyRevoked && *u.Status != KeyExpired {
		return nil, errs.Invalidf("status", "enum", "status must be one of active, revoked, expired (got %q)", *u.Status)
	}
	if err := checkMetadata("metadata", u.Metadata); err != nil {
		return nil, err
	}
	var out *APIKey
	err := update(a, &out, func(tx store.Tx) error {
		k, err := a.loadKey(tx, id)
		if err != nil || k == nil {
			return err
		}
		changed := map[string]any{}
		if u.Name != nil {
			k.Name, changed["name"] = *u.Name, *u.Name
		}
		if u.Permissions != nil {
			k.Permissions, changed["permissions"] = u.Permissions, u.Permissions
		}
		if u.Scopes != nil {
			k.Scopes, changed["scopes"] = u.Scopes, u.Scopes
		}
		if u.RateLimit != nil {
			k.RateLimit, changed["rate_limit"] = *u.RateLimit, *u.RateLimit
		}
		if u.Metadata != nil {
			k.Metadata, changed["metadata"] = u.Metadata, true
		}
		if u.Status != nil {
			k.Status, changed["status"] = *u.Status, *u.Status
			k.GraceEndsAt = nil
			if *u.Status == KeyRevoked && k.RevokedAt == nil {
				ts := FormatTime(a.now())
				k.RevokedAt = &ts
			}
		}
		k.UpdatedAt = FormatTime(a.now())
		if err := a.putKey(tx, k, false); err != nil {
			return err
		}
		if err := a.audit(tx, id, "updated", u.UpdatedBy, changed); err != nil {
			return err
		}
		out = k
		return nil
	})
	return out, internal(err)
}

// RevokeAPIKey revokes a key at once and logs it; nil for an unknown key.
// Revoking a revoked key changes nothing.
func (a *Admin) RevokeAPIKey(id, revokedBy string) (*APIKey, error) {
	var out *APIKey
	err := update(a, &out, func(tx store.Tx) error {
		k, err := a.loadKey(tx, id)
		if err != nil || k == nil {
			return err
		}
		out = k
		if k.Status == KeyRevoked {
			return nil
		}
		ts := FormatTime(a.now())
		k.Status, k.RevokedAt, k.UpdatedAt, k.GraceEndsAt = KeyRevoked, &ts, ts, nil
		if revokedBy != "" {
			k.RevokedBy = &revokedBy
		}
		if err := a.putKey(tx, k, false); err != nil {
			return err
		}
		if err := a.audit(tx, id, "revoked", revokedBy, nil); err != nil {
			return err
		}
		return a.event(tx, EventKeyRevoked, keyEvent(k))
	})
	return out, internal(err)
}

// RotateOptions are rotateApiKey's options.
type RotateOptions struct {
	RotatedBy string `json:"rotated_by,omitempty"`
	// GracePeriodMs keeps the old key valid this long after the rotation
	// (at most MaxGracePeriod). 0, the default, stops it at once as the
	// specification says.
	GracePeriodMs int64 `json:"grace_period_ms,omitempty"`
}

// RotateResult is rotateApiKey's result.
type RotateResult struct {
	OldKey *APIKey `json:"old_key"`
	NewKey *APIKey `json:"new_key"`
}

// RotateAPIKey replaces an active key: the new key copies its settings and
// links back through rotated_from; the old key is revoked. nil result for
// an unknown key; 409 for a key that is not active.
func (a *Admin) RotateAPIKey(id string, o RotateOptions) (*RotateResult, error) {
	if o.GracePeriodMs < 0 || time.Duration(o.GracePeriodMs)*time.Millisecond > MaxGracePeriod {
		return nil, errs.Invalidf("grace_period_ms", "maximum", "grace_period_ms must be between 0 and %d", MaxGracePeriod.Milliseconds())
	}
	var out *RotateResult
	err := update(a, &out, func(tx store.Tx) error {
		old, err := a.loadKey(tx, id)
		if err != nil || old == nil {
			return err
		}
		if old.Status != KeyActive {
			return errs.Conflictf(errs.Conflict, "key %s is %s; only an active key can be rotated (create a new key instead)", id, old.Status)
		}
		now := a.now()
		by := o.RotatedBy
		if by == "" {
			by = old.CreatedBy
		}
		nk := a.mint(now, old.Name, old.OrgID, old.WorkspaceID, old.UserID, old.Permissions, old.Scopes, old.RateLimit, old.ExpiresAt, by, old.Metadata)
		nk.RotatedFrom = &old.ID
		ts := FormatTime(now)
		old.UpdatedAt = ts
		if o.RotatedBy != "" {
			old.RevokedBy = &o.RotatedBy
		}
		if o.GracePeriodMs > 0 {
			// Rotating until the grace period ends, revoked from then on.
			g := FormatTime(now.Add(time.Duration(o.GracePeriodMs) * time.Millisecond))
			old.Status, old.GraceEndsAt = KeyRotating, &g
		} else {
			old.Status, old.RevokedAt = KeyRevoked, &ts
		}
		if err := a.putKey(tx, old, false); err != nil {
			return err
		}
		if err := a.putKey(tx, nk, true); err != nil {
			return err
		}
		if err := a.audit(tx, old.ID, "rotated", o.RotatedBy, map[string]any{"new_key_id": nk.ID, "grace_period_ms": o.GracePeriodMs}); err != nil {
			return err
		}
		if err := a.audit(tx, nk.ID, "created", by, map[string]any{"rotated_from": old.ID}); err != nil {
			return err
		}
		out = &RotateResult{OldKey: old, NewKey: nk}
		ev := keyEvent(nk)
		ev["rotated_from"] = old.ID
		return a.event(tx, EventKeyRotated, ev)
	})
	return out, internal(err)
}
