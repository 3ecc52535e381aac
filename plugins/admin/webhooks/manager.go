package webhooks

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// IsDevelopment reports whether CAIRN_ENV is "development", the only
// setting under which webhooks may target private and loopback addresses.
func IsDevelopment() bool { return os.Getenv("CAIRN_ENV") == "development" }

// Backoff is the retry schedule: the n-th retry waits Base·2^(n-1), capped
// at Max, with "equal jitter" (a random point in the upper half) so many
// failing deliveries do not retry in lockstep.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
	// Rand returns a number in [0, 1); nil means math/rand.
	Rand func() float64
}

// DefaultBackoff retries after about 1 s, 2 s, 4 s, ... up to 1 h.
var DefaultBackoff = Backoff{Base: time.Second, Max: time.Hour}

// Delay is the wait before retry number n (n ≥ 1).
func (b Backoff) Delay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	return d/2 + time.Duration(r()*float64(d/2))
}

// Options configure a Manager.
type Options struct {
	// Development allows private and loopback targets (CAIRN_ENV).
	Development bool
	// Resolver checks host names at registration; nil is the system's.
	Resolver Resolver
	// Client sends deliveries; nil builds NewHTTPClient(Development).
	Client *http.Client
	// Backoff is the retry schedule; zero means DefaultBackoff.
	Backoff Backoff
	// Sleep waits between Deliver's in-call retries; nil sleeps for real
	// (tests inject one so they do not wait).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock.
	Now func() time.Time
	// Logger receives operational logs (never secrets or payloads).
	Logger hclog.Logger
	// PollInterval is how often Run looks for deliveries another process
	// queued; default 1 s.
	PollInterval time.Duration
	// Workers bounds concurrent attempts in Run and TriggerEvent; default 8.
	Workers int
	// SecretGrace is how long a rotated-out secret keeps signing; default
	// 24 h.
	SecretGrace time.Duration
	// UserAgent is sent with deliveries.
	UserAgent string
	// HeldRetention is how long a delivery held for a paused webhook waits
	// for resume before it expires (recorded as expired, with the reason);
	// default DefaultHeldRetention.
	HeldRetention time.Duration
}

// Manager is the webhook registry and delivery manager of one store.
type Manager struct {
	st       *store.Store
	validate *URLValidator
	client   *http.Client
	backoff  Backoff
	sleep    func(ctx context.Context, d time.Duration) error
	now      func() time.Time
	log      hclog.Logger
	poll     time.Duration
	workers  int
	grace    time.Duration
	ua       string
	kick     chan struct{}
	limits   *limiter
	retain   time.Duration
	// lastSweep is when Run last expired old held deliveries (unix nanos).
	lastSweep atomic.Int64
	// pg is the store's connection pool on PostgreSQL, where deliveries
	// are claimed from the queue table without the writer lock; nil on
	// bbolt.
	pg *pgxpool.Pool
}

// New binds a manager to the store and registers its fan-out, so every
// event emitted on the store queues deliveries to subscribed webhooks in
// the emitting transaction.
func New(st *store.Store, o Options) *Manager {
	if o.Client == nil {
		o.Client = NewHTTPClient(o.Development)
	}
	if o.Backoff.Base <= 0 {
		o.Backoff.Base = DefaultBackoff.Base
	}
	if o.Backoff.Max <= 0 {
		o.Backoff.Max = DefaultBackoff.Max
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.SecretGrace == 0 {
		o.SecretGrace = 24 * time.Hour
	}
	if o.UserAgent == "" {
		o.UserAgent = "cairn-webhooks/1"
	}
	if o.HeldRetention <= 0 {
		o.HeldRetention = DefaultHeldRetention
	}
	m := &Manager{
		st: st, validate: NewURLValidator(o.Development, o.Resolver), client: o.Client, backoff: o.Backoff,
		sleep: o.Sleep, now: o.Now, log: o.Logger, poll: o.PollInterval, workers: o.Workers, grace: o.SecretGrace,
		ua: o.UserAgent, kick: make(chan struct{}, 1), limits: &limiter{m: map[string]*window{}}, retain: o.HeldRetention,
		pg: st.Postgres(),
	}
	st.OnEmit(func(tx store.Tx, ev store.Event) error {
		_, _, _, err := m.enqueueTx(tx, ev, false, false, nil)
		return err
	})
	return m
}

// ValidateWebhookURL applies this manager's rules to a URL.
func (m *Manager) ValidateWebhookURL(ctx context.Context, rawURL string) ValidationResult {
	return m.validate.Validate(ctx, rawURL)
}

// ConfigOptions override parts of DefaultConfig.
type ConfigOptions struct {
	MaxRetries         *int `json:"maxRetries,omitempty"`
	Timeout            *int `json:"timeout,omitempty"`
	RateLimitPerSecond *int `json:"rateLimitPerSecond,omitempty"`
	RateLimitPerMinute *int `json:"rateLimitPerMinute,omitempty"`
}

func (o *ConfigOptions) apply(c Config) (Config, error) {
	if o != nil {
		if o.MaxRetries != nil {
			c.MaxRetries = *o.MaxRetries
		}
		if o.Timeout != nil {
			c.Timeout = *o.Timeout
		}
		if o.RateLimitPerSecond != nil {
			c.RateLimitPerSecond = *o.RateLimitPerSecond
		}
		if o.RateLimitPerMinute != nil {
			c.RateLimitPerMinute = *o.RateLimitPerMinute
		}
	}
	return c, c.Check()
}

// RegisterOptions are register's options.
type RegisterOptions struct {
	URL         string         `json:"url"`
	Description string         `json:"description,omitempty"`
	EventTypes  []string       `json:"eventTypes,omitempty"`
	Secret      string         `json:"secret,omitempty"`
	Config      *ConfigOptions `json:"config,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// WorkspaceID scopes the webhook to one workspace's events; empty
	// receives every event.
	WorkspaceID string `json:"workspaceId,omitempty"`
	// CreatedBy is who registers it.
	CreatedBy string `json:"createdBy,omitempty"`
}

// Registered is the part of a new webhook register returns, with its
// secret (shown this once).
type Registered struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"`
	// SecretNotice replaces Secret in a repeat of a keyed call made after
	// the secret was dropped: it says how to get a new one.
	SecretNotice string `json:"secret_notice,omitempty"`
}

// RegisterResult is register's result.
type RegisterResult struct {
	Success bool        `json:"success"`
	Webhook *Registered `json:"webhook,omitempty"`
	Error   string      `json:"error,omitempty"`
}

func fail(err error) (*RegisterResult, error) {
	return &RegisterResult{Error: errs.From(err).Message}, err
}

// Register validates and stores a webhook. On a validation failure the
// result says success false and the error is a typed ERR_INVALID_INPUT.
func (m *Manager) Register(ctx context.Context, o RegisterOptions) (*RegisterResult, error) {
	return m.register(ctx, o, nil)
}

func (m *Manager) register(ctx context.Context, o RegisterOptions, c *store.Call) (*RegisterResult, error) {
	if r := m.validate.Validate(ctx, o.URL); !r.Valid {
		return fail(errs.Invalid("url", "url", r.Error))
	}
	if err := CheckEventTypes(o.EventTypes); err != nil {
		return fail(err)
	}
	if len([]rune(o.Description)) > 1000 {
		return fail(errs.Invalid("description", "maxLength", "description must be at most 1000 characters"))
	}
	secret := o.Secret
	if secret == "" {
		secret = GenerateSecret()
	} else if err := CheckSecret(secret); err != nil {
		return fail(err)
	}
	cfg, err := o.Config.apply(DefaultConfig)
	if err != nil {
		return fail(err)
	}
	if raw, _ := json.Marshal(o.Metadata); len(raw) > 16*1024 {
		return fail(errs.Invalid("metadata", "maxSize", "metadata must be at most 16 KiB of JSON"))
	}
	ts := formatTime(m.now())
	w := &Webhook{
		ID: GenerateWebhookID(), URL: o.URL, Description: o.Description, EventTypes: dedupe(o.EventTypes),
		Secret: secret, HasSecret: true, Status: StatusActive, Config: cfg, Metadata: o.Metadata,
		CreatedAt: ts, UpdatedAt: ts, CreatedBy: o.CreatedBy,
	}
	if o.WorkspaceID != "" {
		ws := o.WorkspaceID
		w.WorkspaceID = &ws
	}
	if w.Metadata == nil {
		w.Metadata = map[string]any{}
	}
	res := &RegisterResult{Success: true, Webhook: &Registered{ID: w.ID, URL: w.URL, Secret: secret}}
	if err := m.st.Update(func(tx store.Tx) error {
		_, err := store.Once(tx, c, m.now(), func() (*RegisterResult, error) { return res, putWebhook(tx, w) })
		return err
	}); err != nil {
		return fail(internal(err))
	}
	if c.Replayed() != nil {
		return nil, nil
	}
	return res, nil
}

func internal(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	return errs.New(500, errs.Internal, "admin store: "+err.Error())
}

func putWebhook(tx store.Tx, w *Webhook) error {
	return store.Put(tx, store.BucketWebhooks, []byte(w.ID), toRecord(w))
}

func getWebhook(tx store.Tx, id string) (*Webhook, error) {
	var r record
	found, err := store.Get(tx, store.BucketWebhooks, []byte(id), &r)
	if err != nil || !found {
		return nil, err
	}
	return r.webhook(), nil
}

// GetWebhook returns the webhook (secret included, for in-process use;
// its JSON omits it) or nil.
func (m *Manager) GetWebhook(id string) (*Webhook, error) {
	var out *Webhook
	err := m.st.View(func(tx store.Tx) error {
		w, err := getWebhook(tx, id)
		out = w
		return err
	})
	return out, internal(err)
}

// ListFilters filter listWebhooks.
type ListFilters struct {
	Status    string `json:"status,omitempty"`
	EventType string `json:"eventType,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	Offset    int    `json:"offset,omitempty"`
	// Visible, when set, keeps only the webhooks it accepts (applied
	// before paging).
	Visible func(w *Webhook) bool `json:"-"`
}

// ListWebhooks lists webhooks, oldest first; EventType keeps the ones
// subscribed to that type.
func (m *Manager) ListWebhooks(f ListFilters) ([]*Webhook, error) {
	if f.Status != "" {
		if err := CheckStatus(f.Status); err != nil {
			return nil, err
		}
	}
	if f.Limit < 0 || f.Limit > 500 || f.Offset < 0 {
		return nil, errs.Invalid("limit", "maximum", "limit must be between 1 and 500 and offset at least 0")
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	out := []*Webhook{}
	err := m.st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketWebhooks)).ForEach(func(_, v []byte) error {
			w, err := FromJSON(v)
			if err != nil {
				return err
			}
			if (f.Status == "" || w.Status == f.Status) && (f.EventType == "" || w.IsSubscribedTo(f.EventType)) && (f.Visible == nil || f.Visible(w)) {
				out = append(out, w)
			}
			return nil
		})
	})
	if err != nil {
		return nil, internal(err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].CreatedAt < out[j].CreatedAt || (out[i].CreatedAt == out[j].CreatedAt && out[i].ID < out[j].ID)
	})
	if f.Offset >= len(out) {
		return []*Webhook{}, nil
	}
	out = out[f.Offset:]
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Updates are updateWebhook's fields; nil leaves a field.
type Updates struct {
	URL         *string        `json:"url,omitempty"`
	Description *string        `json:"description,omitempty"`
	EventTypes  []string       `json:"eventTypes,omitempty"`
	Config      *ConfigOptions `json:"config,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Status      *string        `json:"status,omitempty"`
}

// UpdateWebhook changes a webhook; nil for an unknown one.
func (m *Manager) UpdateWebhook(ctx context.Context, id string, u Updates) (*Webhook, error) {
	return m.updateWebhook(ctx, id, u, nil)
}

func (m *Manager) updateWebhook(ctx context.Context, id string, u Updates, c *store.Call) (*Webhook, error) {
	if u.URL != nil {
		if r := m.validate.Validate(ctx, *u.URL); !r.Valid {
			return nil, errs.Invalid("url", "url", r.Error)
		}
	}
	if u.EventTypes != nil {
		if err := CheckEventTypes(u.EventTypes); err != nil {
			return nil, err
		}
	}
	if u.Status != nil {
		if err := CheckStatus(*u.Status); err != nil {
			return nil, err
		}
	}
	if u.Description != nil && len([]rune(*u.Description)) > 1000 {
		return nil, errs.Invalid("description", "maxLength", "description must be at most 1000 characters")
	}
	return m.change(id, c, func(w *Webhook) error {
		cfg, err := u.Config.apply(w.Config)
		if err != nil {
			return err
		}
		w.Config = cfg
		if u.URL != nil {
			w.URL = *u.URL
		}
		if u.Description != nil {
			w.Description = *u.Description
		}
		if u.EventTypes != nil {
			w.EventTypes = dedupe(u.EventTypes)
		}
		if u.Metadata != nil {
			w.Metadata = u.Metadata
		}
		if u.Status != nil {
			return w.SetStatus(*u.Status)
		}
		return nil
	}, func(w *Webhook) any { return w })
}

// change applies f to a webhook. A webhook that becomes active releases
// the deliveries held while it was not, in the order they were queued.
// Under a keyed call c it records what result makes of the changed webhook
// (the caller's return value), and a repeat changes nothing and returns
// nil.
func (m *Manager) change(id string, c *store.Call, f func(w *Webhook) error, result func(w *Webhook) any) (*Webhook, error) {
	var out *Webhook
	err := m.st.Update(func(tx store.Tx) error {
		_, err := store.Once(tx, c, m.now(), func() (any, error) {
			w, err := getWebhook(tx, id)
			if err != nil || w == nil {
				return nil, err
			}
			if err := f(w); err != nil {
				return nil, err
			}
			w.UpdatedAt = formatTime(m.now())
			out = w
			if err := putWebhook(tx, w); err != nil {
				return nil, err
			}
			if w.Status == StatusActive {
				if err := m.releaseHeld(tx, w.ID); err != nil {
					return nil, err
				}
			}
			return result(w), nil
		})
		return err
	})
	if err != nil {
		return nil, internal(err)
	}
	if out != nil && out.Status == StatusActive {
		m.Kick()
	}
	return out, nil
}

// Pause stops deliveries to a webhook; false if unknown. Events for it are
// held (persisted, in order) until Resume, for at most HeldRetention.
func (m *Manager) Pause(id string) (bool, error) { return m.setStatus(id, StatusPaused, nil) }

// setStatus sets a webhook's status (checked by the caller); false if
// unknown. Under a keyed call it records true.
func (m *Manager) setStatus(id, status string, c *store.Call) (bool, error) {
	w, err := m.change(id, c, func(w *Webhook) error { return w.SetStatus(status) }, func(*Webhook) any { return true })
	return w != nil, err
}

// Resume makes a webhook active again (clearing an error run) and releases
// its held deliveries in order; false if unknown.
func (m *Manager) Resume(id string) (bool, error) { return m.setStatus(id, StatusActive, nil) }

// SetStatus sets any status; false if unknown.
func (m *Manager) SetStatus(id, status string) (bool, error) {
	if err := CheckStatus(status); err != nil {
		return false, err
	}
	return m.setStatus(id, status, nil)
}

// RotateSecret gives a webhook a new secret (generated when newSecret is
// empty) and returns it; the old one keeps signing for the grace period.
// "" and nil error for an unknown webhook.
func (m *Manager) RotateSecret(id, newSecret string) (string, error) {
	return m.rotateSecret(id, newSecret, nil)
}

func (m *Manager) rotateSecret(id, newSecret string, c *store.Call) (string, error) {
	if newSecret != "" {
		if err := CheckSecret(newSecret); err != nil {
			return "", err
		}
	}
	var secret string
	w, err := m.change(id, c, func(w *Webhook) error {
		s, err := w.RotateSecret(newSecret, m.grace, m.now())
		secret = s
		return err
	}, func(*Webhook) any { return secret })
	if w == nil {
		secret = "" // unknown, or a repeat that changed nothing
	}
	return secret, err
}

// Unregister deletes a webhook and cancels its queued deliveries; its
// history stays. false if unknown.
func (m *Manager) Unregister(id string) (bool, error) { return m.unregister(id, nil) }

func (m *Manager) unregister(id string, c *store.Call) (bool, error) {
	ok := false
	err := m.st.Update(func(tx store.Tx) error {
		_, err := store.Once(tx, c, m.now(), func() (bool, error) {
			b := tx.Bucket([]byte(store.BucketWebhooks))
			if b.Get([]byte(id)) == nil {
				return false, nil
			}
			if err := b.Delete([]byte(id)); err != nil {
				return false, err
			}
			ok = true
			return true, m.cancelQueued(tx, id)
		})
		return err
	})
	return ok, internal(err)
}

// cancelQueued cancels an unregistered webhook's queued deliveries.
func (m *Manager) cancelQueued(tx store.Tx, id string) error {
	return forHistory(tx, id, func(d *Delivery) (bool, error) {
		if d.Status != DeliveryPending && d.Status != DeliveryHeld {
			return false, nil
		}
		if err := unindexDue(tx, d); err != nil {
			return false, err
		}
		d.Status, d.NextAttemptAt = DeliveryCancelled, ""
		return true, nil
	})
}

// Stats is getStats' result.
type ManagerStats struct {
	Total                int            `json:"total"`
	ByStatus             map[string]int `json:"byStatus"`
	TotalDeliveries      int64          `json:"totalDeliveries"`
	SuccessfulDeliveries int64          `json:"successfulDeliveries"`
	FailedDeliveries     int64          `json:"failedDeliveries"`
}

// GetStats summarizes the registry.
func (m *Manager) GetStats() (*ManagerStats, error) { return m.GetStatsWhere(nil) }

// GetStatsWhere summarizes the webhooks keep accepts (all when nil).
func (m *Manager) GetStatsWhere(keep func(w *Webhook) bool) (*ManagerStats, error) {
	s := &ManagerStats{ByStatus: map[string]int{StatusActive: 0, StatusPaused: 0, StatusDisabled: 0, StatusError: 0}}
	err := m.st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketWebhooks)).ForEach(func(_, v []byte) error {
			w, err := FromJSON(v)
			if err != nil {
				return err
			}
			if keep != nil && !keep(w) {
				return nil
			}
			s.Total++
			s.ByStatus[w.Status]++
			s.TotalDeliveries += w.Stats.TotalDeliveries
			s.SuccessfulDeliveries += w.Stats.SuccessfulDeliveries
			s.FailedDeliveries += w.Stats.FailedDeliveries
			return nil
		})
	})
	return s, internal(err)
}

// limiter enforces the per-webhook rate limits within this process.
type limiter struct {
	mu sync.Mutex
	m  map[string]*window
}

type window struct {
	sec, min   int64
	nSec, nMin int
}

// allow counts one delivery to w if both its windows have room.
func (l *limiter) allow(w *Webhook, now time.Time) bool {
	if w.Config.RateLimitPerSecond == 0 && w.Config.RateLimitPerMinute == 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.m[w.ID]
	if st == nil {
		st = &window{}
		l.m[w.ID] = st
	}
	s, mn := now.Unix(), now.Unix()/60
	if st.sec != s {
		st.sec, st.nSec = s, 0
	}
	if st.min != mn {
		st.min, st.nMin = mn, 0
	}
	if (w.Config.RateLimitPerSecond > 0 && st.nSec >= w.Config.RateLimitPerSecond) ||
		(w.Config.RateLimitPerMinute > 0 && st.nMin >= w.Config.RateLimitPerMinute) {
		return false
	}
	st.nSec++
	st.nMin++
	return true
}
