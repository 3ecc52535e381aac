// Package accounts is cairn's administration library (Area B): API keys with
// rate limits, usage and an audit log; workspaces, their members,
// invitations and projects. It is plain Go — no MCP, no gRPC — so the admin
// plugin, the `cairn admin` CLI and the host's HTTP authentication all use
// it directly. Function names mirror the specification's (createApiKey →
// CreateAPIKey, validateApiKey → ValidateAPIKey, ...).
//
// Everything persists in the admin store (package store), which keeps no
// file open between operations so several processes can share it. Failures
// are *errs.Error values (ERR_INVALID_INPUT naming the field, 404, 409, ...);
// getters return nil, nil for unknown ids as the specification's null.
//
// Webhooks live in the sibling package webhooks; construct a
// webhooks.Manager on the same store to have this package's events
// (api_key.*, workspace.*, member.*, project.*) delivered.
package accounts

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultKeyPrefix starts every new API key unless Options.KeyPrefix says
// otherwise.
const DefaultKeyPrefix = "cairn"

// Source names this area on events.
const Source = "admin"

// Compiled on first use, not in package init, which every cairn process runs.
var prefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`) })

// Options configure an Admin.
type Options struct {
	// KeyPrefix starts new API keys (default "cairn"): ^[a-z][a-z0-9]{0,15}$.
	KeyPrefix string
	// Now is the clock; tests inject one.
	Now func() time.Time
	// UsageThreshold is the share of a rate-limit window at which
	// usage.threshold_exceeded warns (0 means DefaultUsageThreshold).
	UsageThreshold float64
}

// Admin is the administration library bound to one store.
type Admin struct {
	st        *store.Store
	prefix    string
	now       func() time.Time
	threshold float64
	usage     usageCounter
	// call is the keyed call this copy of the library serves (Keyed).
	call *store.Call
}

// New binds the library to an open store.
func New(st *store.Store, opts Options) (*Admin, error) {
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = DefaultKeyPrefix
	}
	if !prefixPattern().MatchString(opts.KeyPrefix) {
		return nil, errs.Invalidf("key_prefix", "pattern", "key prefix %q must match %s", opts.KeyPrefix, prefixPattern())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.UsageThreshold == 0 {
		opts.UsageThreshold = DefaultUsageThreshold
	}
	if opts.UsageThreshold < 0 || opts.UsageThreshold > 1 {
		return nil, errs.Invalidf("usage_threshold", "range", "usage threshold must be a share in (0, 1] (got %v)", opts.UsageThreshold)
	}
	a := &Admin{st: st, prefix: opts.KeyPrefix, now: opts.Now, threshold: opts.UsageThreshold}
	a.usage = counterFor(a, st)
	return a, nil
}

// Open opens the admin store CAIRN_STORE names (the file in dataDir by
// default, docs/decisions.md D26) and binds the library to it.
func Open(dataDir string, opts Options) (*Admin, *store.Store, error) {
	st, err := store.OpenFor(dataDir, os.Getenv(store.SettingEnv))
	if err != nil {
		return nil, nil, err
	}
	a, err := New(st, opts)
	if err != nil {
		return nil, nil, err
	}
	return a, st, nil
}

// Store returns the underlying store.
func (a *Admin) Store() *store.Store { return a.st }

// FormatTime renders t as JavaScript's toISOString does (docs/decisions.md D5).
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ParseTime reads an ISO-8601 time (RFC 3339, with or without fraction).
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand never fails on supported platforms; a failure means
		// the process cannot mint secrets at all.
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

func newID(prefix string) string { return prefix + "_" + randomHex(12) }

// event records an administration event inside tx.
func (a *Admin) event(tx store.Tx, typ string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return a.st.Emit(tx, store.Event{ID: "evt_" + randomHex(12), Type: typ, Source: Source, Time: FormatTime(a.now()), Data: raw}, true)
}

// internal wraps unexpected store failures; typed errors pass through.
func internal(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	return errs.New(500, errs.Internal, "admin store: "+err.Error())
}

// Page bounds a listing.
type Page struct {
	Limit  int `json:"limit,omitempty"`
	Offset int `json:"offset,omitempty"`
}

// DefaultLimit and MaxLimit bound every listing.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

func (p Page) check() (Page, error) {
	if p.Limit < 0 || p.Limit > MaxLimit {
		return p, errs.Invalidf("limit", "maximum", "limit must be between 1 and %d (got %d)", MaxLimit, p.Limit)
	}
	if p.Offset < 0 {
		return p, errs.Invalidf("offset", "minimum", "offset must be at least 0 (got %d)", p.Offset)
	}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	return p, nil
}

func paginate[T any](items []T, p Page) []T {
	if p.Offset >= len(items) {
		return []T{}
	}
	items = items[p.Offset:]
	if len(items) > p.Limit {
		items = items[:p.Limit]
	}
	return items
}

func checkLen(field, v string, min, max int) error {
	n := len([]rune(v))
	if n < min {
		if min == 1 {
			return errs.Invalidf(field, "minLength", "%s is required", field)
		}
		return errs.Invalidf(field, "minLength", "%s must be at least %d characters long (got %d)", field, min, n)
	}
	if n > max {
		return errs.Invalidf(field, "maxLength", "%s must be at most %d characters long (got %d)", field, max, n)
	}
	return nil
}

func checkStrings(field string, vs []string, maxItems, maxLen int) error {
	if len(vs) > maxItems {
		return errs.Invalidf(field, "maxItems", "%s must have at most %d items (got %d)", field, maxItems, len(vs))
	}
	for i, v := range vs {
		if err := checkLen(fmt.Sprintf("%s[%d]", field, i), v, 1, maxLen); err != nil {
			return err
		}
	}
	return nil
}

func checkMetadata(field string, m map[string]any) error {
	if m == nil {
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return errs.Invalidf(field, "type", "%s must be a JSON object: %v", field, err)
	}
	if len(raw) > 16*1024 {
		return errs.Invalidf(field, "maxSize", "%s must be at most 16 KiB of JSON (got %d bytes)", field, len(raw))
	}
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Keyed returns the library bound to one keyed call (docs/decisions.md
// D32): each write it makes looks c up in its transaction, answering the
// recorded outcome (c.Replayed) without writing, or records its result in
// the same transaction. A nil c is a call without a key.
func (a *Admin) Keyed(c *store.Call) *Admin {
	b := *a
	b.call = c
	return &b
}

// update runs fn in one write transaction under the library's call: a
// recorded call leaves *out zero and writes nothing; otherwise *out, as fn
// leaves it, is recorded with fn's writes.
func update[T any](a *Admin, out *T, fn func(tx store.Tx) error) error {
	return a.st.Update(func(tx store.Tx) error {
		_, err := store.Once(tx, a.call, a.now(), func() (T, error) {
			err := fn(tx)
			return *out, err
		})
		if a.call.Replayed() != nil {
			var zero T
			*out = zero
		}
		return err
	})
}
