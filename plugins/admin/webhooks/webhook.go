// Package webhooks is the admin area's webhook registry and delivery
// engine: registration with SSRF-safe URL validation, signed deliveries
// (X-Cairn-Signature-256 and the Standard Webhooks headers), retries with
// exponential backoff and jitter from a schedule persisted in the admin
// store, delivery history and statistics. Function names mirror the
// specification's (validateWebhookUrl → ValidateWebhookURL, ...).
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Webhook statuses. A webhook moves to error after ErrorThreshold
// deliveries in a row gave up; resume (or setStatus) brings it back.
const (
	StatusActive   = "active"
	StatusPaused   = "paused"
	StatusDisabled = "disabled"
	StatusError    = "error"
)

// ErrorThreshold is how many consecutive failed deliveries (each after all
// its retries) move a webhook to the error status.
const ErrorThreshold = 10

// SecretPrefix starts generated secrets (the Standard Webhooks form).
const SecretPrefix = "whsec_"

// Config is a webhook's delivery configuration.
type Config struct {
	// MaxRetries is how many times a failed delivery is retried (0–10;
	// default 5), so a delivery makes at most MaxRetries+1 attempts.
	MaxRetries int `json:"maxRetries"`
	// Timeout is one attempt's deadline in milliseconds (100–60000;
	// default 10000).
	Timeout int `json:"timeout"`
	// RateLimitPerSecond and RateLimitPerMinute cap deliveries to this
	// webhook (0 = unlimited); deliveries over the cap wait, they are not
	// dropped.
	RateLimitPerSecond int `json:"rateLimitPerSecond"`
	RateLimitPerMinute int `json:"rateLimitPerMinute"`
}

// DefaultConfig is the configuration of a webhook that names none.
var DefaultConfig = Config{MaxRetries: 5, Timeout: 10000}

// Check validates a configuration.
func (c Config) Check() error {
	switch {
	case c.MaxRetries < 0 || c.MaxRetries > 10:
		return errs.Invalidf("config.maxRetries", "maximum", "config.maxRetries must be between 0 and 10 (got %d)", c.MaxRetries)
	case c.Timeout < 100 || c.Timeout > 60000:
		return errs.Invalidf("config.timeout", "maximum", "config.timeout must be between 100 and 60000 milliseconds (got %d)", c.Timeout)
	case c.RateLimitPerSecond < 0 || c.RateLimitPerSecond > 10000:
		return errs.Invalidf("config.rateLimitPerSecond", "maximum", "config.rateLimitPerSecond must be between 0 and 10000 (got %d)", c.RateLimitPerSecond)
	case c.RateLimitPerMinute < 0 || c.RateLimitPerMinute > 600000:
		return errs.Invalidf("config.rateLimitPerMinute", "maximum", "config.rateLimitPerMinute must be between 0 and 600000 (got %d)", c.RateLimitPerMinute)
	}
	return nil
}

// Stats are a webhook's delivery counters.
type Stats struct {
	TotalDeliveries      int64  `json:"totalDeliveries"`
	SuccessfulDeliveries int64  `json:"successfulDeliveries"`
	FailedDeliveries     int64  `json:"failedDeliveries"`
	ConsecutiveFailures  int    `json:"consecutiveFailures"`
	LastDeliveryAt       string `json:"lastDeliveryAt,omitempty"`
	LastSuccessAt        string `json:"lastSuccessAt,omitempty"`
	LastFailureAt        string `json:"lastFailureAt,omitempty"`
}

// Webhook is a registered endpoint. Its JSON (ToJSON) never carries the
// secret; the store keeps it through the unexported record type.
type Webhook struct {
	ID          string         `json:"id"`
	URL         string         `json:"url"`
	Description string         `json:"description"`
	EventTypes  []string       `json:"eventTypes"`
	Secret      string         `json:"-"`
	HasSecret   bool           `json:"hasSecret"`
	Status      string         `json:"status"`
	Config      Config         `json:"config"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   string         `json:"createdAt"`
	UpdatedAt   string         `json:"updatedAt"`
	Stats       Stats          `json:"stats"`
	// WorkspaceID scopes the webhook to one workspace: it receives only
	// events that belong to it (see EventWorkspace). null: every event
	// (only the local operator registers such webhooks).
	WorkspaceID *string `json:"workspaceId" jsonschema:"oneof_type=string;null"`
	// CreatedBy is who registered it.
	CreatedBy string `json:"createdBy"`
	// PreviousSecret still signs deliveries (as a second Standard Webhooks
	// signature) until PreviousSecretUntil, so receivers can roll over.
	PreviousSecret      string `json:"-"`
	PreviousSecretUntil string `json:"previousSecretUntil,omitempty"`
}

// record is the stored form of a webhook, secrets included.
type record struct {
	Webhook
	Secret         string `json:"secret"`
	PreviousSecret string `json:"previousSecret,omitempty"`
}

func toRecord(w *Webhook) record {
	return record{Webhook: *w, Secret: w.Secret, PreviousSecret: w.PreviousSecret}
}

func (r record) webhook() *Webhook {
	w := r.Webhook
	w.Secret, w.PreviousSecret = r.Secret, r.PreviousSecret
	w.HasSecret = w.Secret != ""
	return &w
}

// ToJSON is the webhook's public JSON: no secret, hasSecret true.
func (w *Webhook) ToJSON() ([]byte, error) {
	c := *w
	c.HasSecret = w.Secret != ""
	return json.Marshal(c)
}

// FromJSON rebuilds a webhook from its stored JSON (secret included).
func FromJSON(data []byte) (*Webhook, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return r.webhook(), nil
}

// IsSubscribedTo reports whether the webhook receives eventType: an empty
// list means every event; "*" and "<category>.*" match by wildcard.
func (w *Webhook) IsSubscribedTo(eventType string) bool {
	if len(w.EventTypes) == 0 {
		return true
	}
	for _, p := range w.EventTypes {
		if seam.MatchEventType(p, eventType) {
			return true
		}
	}
	return false
}

// UpdateStats counts one finished delivery. After ErrorThreshold failures
// in a row an active webhook moves to error.
func (w *Webhook) UpdateStats(success bool, at time.Time) {
	ts := formatTime(at)
	w.Stats.TotalDeliveries++
	w.Stats.LastDeliveryAt = ts
	if success {
		w.Stats.SuccessfulDeliveries++
		w.Stats.ConsecutiveFailures = 0
		w.Stats.LastSuccessAt = ts
		return
	}
	w.Stats.FailedDeliveries++
	w.Stats.ConsecutiveFailures++
	w.Stats.LastFailureAt = ts
	if w.Stats.ConsecutiveFailures >= ErrorThreshold && w.Status == StatusActive {
		w.Status = StatusError
	}
}

// CheckStatus validates a status name.
func CheckStatus(s string) error {
	switch s {
	case StatusActive, StatusPaused, StatusDisabled, StatusError:
		return nil
	}
	return errs.Invalidf("status", "enum", "status must be one of active, paused, disabled, error (got %q)", s)
}

// SetStatus sets the status; going back to active clears the failure run.
func (w *Webhook) SetStatus(s string) error {
	if err := CheckStatus(s); err != nil {
		return err
	}
	if s == StatusActive {
		w.Stats.ConsecutiveFailures = 0
	}
	w.Status = s
	return nil
}

// RotateSecret replaces the secret (a generated one when newSecret is
// empty) and returns it. The old secret keeps signing, as a second
// Standard Webhooks signature, for grace.
func (w *Webhook) RotateSecret(newSecret string, grace time.Duration, now time.Time) (string, error) {
	if newSecret == "" {
		newSecret = GenerateSecret()
	}
	if err := CheckSecret(newSecret); err != nil {
		return "", err
	}
	if grace > 0 {
		w.PreviousSecret = w.Secret
		w.PreviousSecretUntil = formatTime(now.Add(grace))
	} else {
		w.PreviousSecret, w.PreviousSecretUntil = "", ""
	}
	w.Secret = newSecret
	return newSecret, nil
}

// SetEventTypes replaces the subscription after validating every pattern.
func (w *Webhook) SetEventTypes(types []string) error {
	if err := CheckEventTypes(types); err != nil {
		return err
	}
	w.EventTypes = dedupe(types)
	return nil
}

// CheckEventTypes validates a subscription list.
func CheckEventTypes(types []string) error {
	if len(types) > 100 {
		return errs.Invalidf("eventTypes", "maxItems", "eventTypes must have at most 100 items (got %d)", len(types))
	}
	for i, t := range types {
		if !IsValidPattern(t) {
			return errs.Invalidf(fmt.Sprintf("eventTypes[%d]", i), "enum", "%q is not an event type: use \"*\", \"<category>.*\" (categories: %s) or a type such as task.created", t, strings.Join(Categories(), ", "))
		}
	}
	return nil
}

func dedupe(in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// CheckSecret validates a caller-chosen secret.
func CheckSecret(s string) error {
	if n := len(s); n < 16 || n > 256 {
		return errs.Invalidf("secret", "minLength", "secret must be 16 to 256 characters long (got %d); omit it to have one generated", n)
	}
	return nil
}

// GenerateSecret returns a secret of 256 random bits in the Standard
// Webhooks form whsec_<base64>.
func GenerateSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// GenerateWebhookID returns an id of the form wh_<unix ms>_<random>.
func GenerateWebhookID() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return "wh_" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "_" + hex.EncodeToString(b)
}

// Sign returns "sha256=<hex>" of the HMAC-SHA256 of payload keyed with the
// secret's bytes: the X-Cairn-Signature-256 header.
func Sign(payload []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(payload)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Sign signature in constant time.
func Verify(payload []byte, signature, secret string) bool {
	return hmac.Equal([]byte(Sign(payload, secret)), []byte(signature))
}

// StandardKey is the HMAC key Standard Webhooks signatures use: the
// base64-decoded part of a whsec_ secret, else the secret's bytes.
func StandardKey(secret string) []byte {
	if s, ok := strings.CutPrefix(secret, SecretPrefix); ok {
		if k, err := base64.StdEncoding.DecodeString(s); err == nil {
			return k
		}
	}
	return []byte(secret)
}

// StandardSignature is one Standard Webhooks signature, "v1,<base64>", of
// msgID.timestamp.body.
func StandardSignature(msgID string, timestamp int64, body []byte, secret string) string {
	m := hmac.New(sha256.New, StandardKey(secret))
	m.Write([]byte(msgID))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyStandard checks a webhook-signature header value (space-separated
// "v1,<base64>" entries) against the secret in constant time per entry.
func VerifyStandard(msgID string, timestamp int64, body []byte, header, secret string) bool {
	want := []byte(StandardSignature(msgID, timestamp, body, secret))
	ok := false
	for _, sig := range strings.Fields(header) {
		if hmac.Equal(want, []byte(sig)) {
			ok = true
		}
	}
	return ok
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
