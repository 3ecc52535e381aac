package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryCancelled = "cancelled"
)

// Delivery is a DeliveryRecord: one event on its way to one webhook, with
// its retry schedule. Pending deliveries live in the store, so a restart
// resumes them.
type Delivery struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhookId"`
	EventID       string          `json:"eventId"`
	EventType     string          `json:"eventType"`
	Payload       json.RawMessage `json:"payload"`
	Status        string          `json:"status"`
	StatusCode    int             `json:"statusCode"`
	Attempts      int             `json:"attempts"`
	Duration      int64           `json:"duration"`
	CreatedAt     string          `json:"createdAt"`
	UpdatedAt     string          `json:"updatedAt"`
	NextAttemptAt string          `json:"nextAttemptAt,omitempty"`
	LastError     string          `json:"lastError,omitempty"`
	// Reason says why a delivery was never attempted (expired, cancelled).
	Reason string `json:"reason,omitempty"`
	// due and claim are the schedule's bookkeeping.
	Due   int64  `json:"due,omitempty"`
	Claim string `json:"claim,omitempty"`
	Test  bool   `json:"test,omitempty"`
}

func newDeliveryID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return "msg_" + hex.EncodeToString(b)
}

// body is the JSON a receiver gets.
func body(ev store.Event) []byte {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	raw, _ := json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Source    string          `json:"source,omitempty"`
		Data      json.RawMessage `json:"data"`
	}{ev.ID, ev.Type, ev.Time, ev.Source, data})
	return raw
}

func dueKey(due int64, id string) []byte { return store.Key(store.U64(uint64(due)), []byte(id)) }

// historyKey orders a webhook's history by a store-wide sequence number
// rather than by time: deliveries within one millisecond keep their order.
func historyKey(webhookID string, seq uint64, id string) []byte {
	return store.Key([]byte(webhookID), store.U64(seq), []byte(id))
}

// indexDue schedules d at due: the due bucket on bbolt, the queue table on
// PostgreSQL.
func indexDue(tx store.Tx, d *Delivery, due time.Time) error {
	d.Due = due.UnixNano()
	d.NextAttemptAt = formatTime(due)
	if q, err := queueIn(tx); q != nil || err != nil {
		if err != nil {
			return err
		}
		return q.schedule(d.ID, due, "", time.Time{})
	}
	return tx.Bucket([]byte(store.BucketDeliveryDue)).Put(dueKey(d.Due, d.ID), nil)
}

func unindexDue(tx store.Tx, d *Delivery) error {
	if q, err := queueIn(tx); q != nil || err != nil {
		if err != nil {
			return err
		}
		d.Due = 0
		return q.remove(d.ID)
	}
	if d.Due == 0 {
		return nil
	}
	err := tx.Bucket([]byte(store.BucketDeliveryDue)).Delete(dueKey(d.Due, d.ID))
	d.Due = 0
	return err
}

func putDelivery(tx store.Tx, d *Delivery) error {
	return store.Put(tx, store.BucketDeliveries, []byte(d.ID), d)
}

func getDelivery(tx store.Tx, id string) (*Delivery, error) {
	var d Delivery
	found, err := store.Get(tx, store.BucketDeliveries, []byte(id), &d)
	if err != nil || !found {
		return nil, err
	}
	return &d, nil
}

// maxHistoryPerWebhook bounds the deliveries kept per webhook, so the admin
// store does not grow without bound; a var so tests can lower it.
var maxHistoryPerWebhook = 1000

// addHistory indexes a new delivery d in its webhook's history (once; the
// key is not derivable from d) and drops the oldest
// finished deliveries beyond maxHistoryPerWebhook. Pending and held
// deliveries are never dropped: they are still owed to the receiver.
func addHistory(tx store.Tx, d *Delivery) error {
	idx := tx.Bucket([]byte(store.BucketDeliveryByHook))
	seq, err := store.NextSeq(tx, "delivery_history")
	if err != nil {
		return err
	}
	if err := idx.Put(historyKey(d.WebhookID, seq, d.ID), nil); err != nil {
		return err
	}
	prefix := store.Key([]byte(d.WebhookID), nil)
	var keys [][]byte
	c := idx.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	excess := len(keys) - maxHistoryPerWebhook
	for _, k := range keys {
		if excess <= 0 {
			break
		}
		id := k[len(prefix)+9:]
		old, err := getDelivery(tx, string(id))
		if err != nil {
			return err
		}
		if old != nil && unfinished(old.Status) {
			continue
		}
		if err := tx.Bucket([]byte(store.BucketDeliveries)).Delete(id); err != nil {
			return err
		}
		if err := idx.Delete(k); err != nil {
			return err
		}
		excess--
	}
	return nil
}

// forHistory visits a webhook's deliveries, writing back changed ones.
func forHistory(tx store.Tx, webhookID string, f func(d *Delivery) (bool, error)) error {
	prefix := store.Key([]byte(webhookID), nil)
	c := tx.Bucket([]byte(store.BucketDeliveryByHook)).Cursor()
	var ids [][]byte
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, append([]byte(nil), k[len(prefix)+9:]...))
	}
	for _, id := range ids {
		d, err := getDelivery(tx, string(id))
		if err != nil || d == nil {
			return err
		}
		changed, err := f(d)
		if err != nil {
			return err
		}
		if changed {
			if err := putDelivery(tx, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimFor marks d as being attempted by this process until the claim
// expires; a process that dies mid-attempt leaves it to be retried.
func (m *Manager) claimFor(tx store.Tx, d *Delivery, w *Webhook, now time.Time) error {
	d.Claim = newDeliveryID()
	if q, err := queueIn(tx); q != nil || err != nil {
		if err != nil {
			return err
		}
		d.Due, d.NextAttemptAt = now.UnixNano(), formatTime(now.Add(leaseFor(w)))
		return q.schedule(d.ID, now, d.Claim, now.Add(leaseFor(w)))
	}
	if err := unindexDue(tx, d); err != nil {
		return err
	}
	return indexDue(tx, d, now.Add(leaseFor(w)))
}

// stillClaimed reports whether the stored delivery d is still claimed by
// claim: the record's claim on bbolt, the queue row's on PostgreSQL (whose
// claims are made without touching the record).
func stillClaimed(tx store.Tx, d *Delivery, claim string) (bool, error) {
	if q, err := queueIn(tx); q != nil || err != nil {
		if err != nil {
			return false, err
		}
		owner, err := q.claimedBy(d.ID)
		return owner == claim, err
	}
	return d.Claim == claim, nil
}

// receives reports whether w takes ev: subscribed, active or paused (a
// paused webhook's deliveries are held), and in scope — only when
// workspace (EventWorkspace of ev, computed once) matches a scoped webhook.
func receives(w *Webhook, ev store.Event, workspace func() string) bool {
	if (w.Status != StatusActive && w.Status != StatusPaused) || !w.IsSubscribedTo(ev.Type) {
		return false
	}
	return w.WorkspaceID == nil || *w.WorkspaceID == workspace()
}

// subscribers lists the webhooks that take ev; only, when set, replaces the
// workspace scope check (a trigger aimed at one workspace's webhooks).
func subscribers(tx store.Tx, ev store.Event, only func(w *Webhook) bool) ([]*Webhook, error) {
	var hooks []*Webhook
	evWS, known := "", false
	workspace := func() string {
		if !known {
			evWS, known = EventWorkspace(tx, ev), true
		}
		return evWS
	}
	err := tx.Bucket([]byte(store.BucketWebhooks)).ForEach(func(_, v []byte) error {
		w, err := FromJSON(v)
		if err != nil {
			return err
		}
		if only != nil {
			if (w.Status == StatusActive || w.Status == StatusPaused) && w.IsSubscribedTo(ev.Type) && only(w) {
				hooks = append(hooks, w)
			}
		} else if receives(w, ev, workspace) {
			hooks = append(hooks, w)
		}
		return nil
	})
	return hooks, err
}

// enqueueTx queues ev for every webhook that takes it: scheduled for an
// active webhook, held for a paused one. With claim the new deliveries of
// active webhooks are claimed for an immediate attempt. With once, ev is
// queued at most once per webhook however often it arrives (a bus event
// redelivered under its id).
func (m *Manager) enqueueTx(tx store.Tx, ev store.Event, claim, once bool, only func(w *Webhook) bool) (jobs []job, queued, held int, err error) {
	hooks, err := subscribers(tx, ev, only)
	if err != nil || len(hooks) == 0 {
		return nil, 0, 0, err
	}
	now := m.now()
	if once {
		fresh := hooks[:0]
		for _, w := range hooks {
			if queuedFor(tx, ev.ID, w.ID) {
				continue
			}
			if err := markQueued(tx, now, ev.ID, w.ID); err != nil {
				return nil, 0, 0, err
			}
			fresh = append(fresh, w)
		}
		if hooks = fresh; len(hooks) == 0 {
			return nil, 0, 0, nil
		}
	}
	payload := body(ev)
	for _, w := range hooks {
		ts := formatTime(now)
		d := &Delivery{ID: newDeliveryID(), WebhookID: w.ID, EventID: ev.ID, EventType: ev.Type, Payload: payload,
			Status: DeliveryPending, CreatedAt: ts, UpdatedAt: ts}
		if w.Status != StatusActive {
			d.Status = DeliveryHeld
			held++
		} else if claim && m.limits.allow(w, now) {
			if err := m.claimFor(tx, d, w, now); err != nil {
				return nil, 0, 0, err
			}
			jobs = append(jobs, job{d: d, w: w})
		} else if err := indexDue(tx, d, now); err != nil {
			return nil, 0, 0, err
		}
		if err := putDelivery(tx, d); err != nil {
			return nil, 0, 0, err
		}
		if err := addHistory(tx, d); err != nil {
			return nil, 0, 0, err
		}
	}
	if !claim {
		m.Kick()
	}
	return jobs, len(hooks), held, nil
}

// EnqueueEvent queues an event from the host bus for every subscribed
// webhook; Run delivers it.
func (m *Manager) EnqueueEvent(ev store.Event) error {
	// The host's own notifications on the bus (resource.updated,
	// prompts.changed, …) are not webhook events: a webhook subscribed to
	// every event means every event of the catalog (EventTypes).
	if !IsValidEventType(ev.Type) {
		return nil
	}
	// Most events have no subscriber; a read avoids a durable commit, and
	// a peek the transaction around it (every server looks, for every
	// event).
	any := false
	if err := m.st.Peek(func(tx store.Tx) error {
		hooks, err := subscribers(tx, ev, nil)
		any = len(hooks) > 0
		return err
	}); err != nil || !any {
		return internal(err)
	}
	return internal(m.st.Update(func(tx store.Tx) error {
		_, _, _, err := m.enqueueTx(tx, ev, false, true, nil)
		return err
	}))
}

// eventHookKey keys BucketDeliveryByEvent.
func eventHookKey(eventID, webhookID string) []byte {
	return store.Key([]byte(eventID), []byte(webhookID))
}

// Kick wakes Run to look for due deliveries now.
func (m *Manager) Kick() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

type job struct {
	d *Delivery
	w *Webhook
}

// outcome is one attempt's result.
type outcome struct {
	StatusCode int
	Duration   time.Duration
	Err        string
}

func (o outcome) ok() bool { return o.Err == "" && o.StatusCode >= 200 && o.StatusCode < 300 }

// attempt sends one delivery once.
func (m *Manager) attempt(ctx context.Context, w *Webhook, d *Delivery, n int) outcome {
	now := m.now()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(w.Config.Timeout)*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return outcome{Err: err.Error()}
	}
	ts := now.Unix()
	sigs := StandardSignature(d.ID, ts, d.Payload, w.Secret)
	if w.PreviousSecret != "" {
		if until, err := time.Parse(time.RFC3339Nano, w.PreviousSecretUntil); err == nil && now.Before(until) {
			sigs += " " + StandardSignature(d.ID, ts, d.Payload, w.PreviousSecret)
		}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", m.ua)
	h.Set("webhook-id", d.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sigs)
	h.Set("X-Cairn-Signature-256", Sign(d.Payload, w.Secret))
	h.Set("X-Cairn-Event", d.EventType)
	h.Set("X-Cairn-Delivery", d.ID)
	h.Set("X-Cairn-Attempt", strconv.Itoa(n))
	start := time.Now()
	resp, err := m.client.Do(req)
	dur := time.Since(start)
	if err != nil {
		return outcome{Duration: dur, Err: err.Error()}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	o := outcome{StatusCode: resp.StatusCode, Duration: time.Since(start)}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		o.Err = fmt.Sprintf("HTTP %d: %v (Location: %s)", resp.StatusCode, ErrRedirect, resp.Header.Get("Location"))
	case !o.ok():
		o.Err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return o
}

// finish records an attempt: delivered, failed for good, or rescheduled
// with backoff. It reports whether the delivery is still pending.
func (m *Manager) finish(j job, o outcome) (pending bool, err error) {
	err = m.st.Update(func(tx store.Tx) error {
		d, err := getDelivery(tx, j.d.ID)
		if err != nil || d == nil {
			return err
		}
		if ours, err := stillClaimed(tx, d, j.d.Claim); err != nil || !ours || d.Status != DeliveryPending {
			// Our claim expired and another process took over.
			return err
		}
		now := m.now()
		if err := unindexDue(tx, d); err != nil {
			return err
		}
		d.Claim = ""
		d.Attempts++
		d.StatusCode, d.Duration, d.LastError, d.UpdatedAt = o.StatusCode, o.Duration.Milliseconds(), o.Err, formatTime(now)
		w, err := getWebhook(tx, d.WebhookID)
		if err != nil {
			return err
		}
		maxRetries := j.w.Config.MaxRetries
		if w != nil {
			maxRetries = w.Config.MaxRetries
		}
		switch {
		case o.ok():
			d.Status, d.NextAttemptAt = DeliveryDelivered, ""
		case d.Attempts > maxRetries || w == nil:
			d.Status, d.NextAttemptAt = DeliveryFailed, ""
		default:
			pending = true
			if err := indexDue(tx, d, now.Add(m.backoff.Delay(d.Attempts))); err != nil {
				return err
			}
		}
		if err := putDelivery(tx, d); err != nil {
			return err
		}
		if w != nil && !pending {
			w.UpdateStats(d.Status == DeliveryDelivered, now)
			return putWebhook(tx, w)
		}
		return nil
	})
	return pending, internal(err)
}

// claimDue claims up to limit due deliveries of active webhooks, at most
// one per webhook, so each webhook gets its deliveries one after another in
// schedule order. A due delivery of a webhook that is no longer active is
// held until the webhook is resumed.
func (m *Manager) claimDue(limit int) ([]job, error) {
	if m.pg != nil {
		return m.claimDuePG(limit)
	}
	var jobs []job
	taken := map[string]bool{}
	err := m.st.Update(func(tx store.Tx) error {
		now := m.now()
		c := tx.Bucket([]byte(store.BucketDeliveryDue)).Cursor()
		type entry struct {
			key []byte
			id  string
		}
		var due []entry
		for k, _ := c.First(); k != nil && len(due) < limit*4; k, _ = c.Next() {
			if int64(binary.BigEndian.Uint64(k[:8])) > now.UnixNano() {
				break
			}
			due = append(due, entry{append([]byte(nil), k...), string(k[9:])})
		}
		for _, e := range due {
			if len(jobs) >= limit {
				break
			}
			d, err := getDelivery(tx, e.id)
			if err != nil {
				return err
			}
			if d == nil || d.Status != DeliveryPending {
				if err := tx.Bucket([]byte(store.BucketDeliveryDue)).Delete(e.key); err != nil {
					return err
				}
				continue
			}
			w, err := getWebhook(tx, d.WebhookID)
			if err != nil {
				return err
			}
			if w == nil {
				if err := unindexDue(tx, d); err != nil {
					return err
				}
				d.Status, d.NextAttemptAt = DeliveryCancelled, ""
				if err := putDelivery(tx, d); err != nil {
					return err
				}
				continue
			}
			if w.Status != StatusActive {
				if err := hold(tx, d, now); err != nil {
					return err
				}
				if err := putDelivery(tx, d); err != nil {
					return err
				}
				continue
			}
			if taken[w.ID] || !m.limits.allow(w, now) {
				continue
			}
			taken[w.ID] = true
			if err := m.claimFor(tx, d, w, now); err != nil {
				return err
			}
			if err := putDelivery(tx, d); err != nil {
				return err
			}
			jobs = append(jobs, job{d: d, w: w})
		}
		return nil
	})
	return jobs, internal(err)
}

// nextDue is when the earliest queued delivery is due (zero if none).
func (m *Manager) nextDue() time.Time {
	if m.pg != nil {
		return m.nextDuePG()
	}
	var t time.Time
	_ = m.st.View(func(tx store.Tx) error {
		if k, _ := tx.Bucket([]byte(store.BucketDeliveryDue)).Cursor().First(); k != nil {
			t = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
		}
		return nil
	})
	return t
}

// runJobs attempts jobs concurrently (at most Workers at once) and records
// each outcome; it returns how many were delivered, failed for good, and
// left pending.
func (m *Manager) runJobs(ctx context.Context, jobs []job) (delivered, failed, pending int) {
	var mu sync.Mutex
	sem := make(chan struct{}, m.workers)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			o := m.attempt(ctx, j.w, j.d, j.d.Attempts+1)
			p, err := m.finish(j, o)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				m.log.Error("recording a webhook delivery failed", "webhook", j.w.ID, "delivery", j.d.ID, "error", err)
				pending++
			case o.ok():
				delivered++
			case p:
				pending++
				m.log.Debug("webhook delivery will be retried", "webhook", j.w.ID, "delivery", j.d.ID, "attempt", j.d.Attempts+1, "error", o.Err)
			default:
				failed++
				m.log.Warn("webhook delivery failed for good", "webhook", j.w.ID, "delivery", j.d.ID, "error", o.Err)
			}
		}(j)
	}
	wg.Wait()
	return
}

// ProcessDue attempts every delivery due now once and returns how many it
// attempted. Run calls it in a loop; tests call it directly.
func (m *Manager) ProcessDue(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		jobs, err := m.claimDue(m.workers * 4)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		m.runJobs(ctx, jobs)
		total += len(jobs)
	}
	return total, ctx.Err()
}

// Run delivers queued events until ctx ends: at once when kicked, when the
// next retry is due, and every PollInterval to catch deliveries other
// processes queued. Pending deliveries left by a previous run are resumed.
func (m *Manager) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if _, err := m.ProcessDue(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("webhook delivery loop", "error", err)
		}
		m.sweep()
		wait := m.poll
		if next := m.nextDue(); !next.IsZero() {
			if d := time.Until(next); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-m.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// TriggerResult is triggerEvent's result: how many webhooks the event was
// queued for, how many took it on the first attempt, how many gave up, and
// how many wait for a retry.
type TriggerResult struct {
	Triggered int `json:"triggered"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
	Pending   int `json:"pending"`
	// Held counts the paused webhooks that hold the event until resumed.
	Held int `json:"held"`
}

// TriggerEvent fires an event at every subscribed active webhook (and holds
// it for paused ones) and waits for the first attempts; failures are
// retried by the persisted schedule.
func (m *Manager) TriggerEvent(ctx context.Context, eventType string, payload any) (*TriggerResult, error) {
	return m.TriggerEventFor(ctx, "", eventType, payload)
}

// TriggerEventFor is TriggerEvent aimed at one workspace's webhooks when
// workspaceID is not empty.
func (m *Manager) TriggerEventFor(ctx context.Context, workspaceID, eventType string, payload any) (*TriggerResult, error) {
	return m.triggerEventFor(ctx, workspaceID, eventType, payload, nil)
}

// triggerEventFor under a keyed call records, with the queued deliveries,
// the outcome as queued (every delivery pending), and amends it with the
// first attempts' outcome once they are done: a repeat after a crash
// between the two answers the queued outcome, and the persisted schedule
// delivers what was claimed.
func (m *Manager) triggerEventFor(ctx context.Context, workspaceID, eventType string, payload any, c *store.Call) (*TriggerResult, error) {
	if !IsValidEventType(eventType) {
		return nil, errs.Invalidf("eventType", "enum", "%q is not an event type (see the event type list)", eventType)
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, errs.Invalidf("payload", "type", "payload must be JSON-encodable: %v", err)
	}
	if payload == nil {
		data = []byte(`{}`)
	}
	ev := store.Event{ID: "evt_" + newDeliveryID()[4:], Type: eventType, Source: "admin", Time: formatTime(m.now()), Data: data}
	var only func(w *Webhook) bool
	if workspaceID != "" {
		only = func(w *Webhook) bool { return w.WorkspaceID != nil && *w.WorkspaceID == workspaceID }
	}
	var jobs []job
	queued, held := 0, 0
	err = m.st.Update(func(tx store.Tx) error {
		_, err := store.Once(tx, c, m.now(), func() (*TriggerResult, error) {
			var err error
			jobs, queued, held, err = m.enqueueTx(tx, ev, true, false, only)
			return &TriggerResult{Triggered: queued, Held: held, Pending: queued - held}, err
		})
		return err
	})
	if err != nil {
		return nil, internal(err)
	}
	if c.Replayed() != nil {
		return nil, nil
	}
	res := &TriggerResult{Triggered: queued, Held: held}
	res.Delivered, res.Failed, res.Pending = m.runJobs(ctx, jobs)
	res.Pending += res.Triggered - res.Held - len(jobs)
	if res.Pending > 0 {
		m.Kick()
	}
	if c.Keyed() {
		if err := m.st.Update(func(tx store.Tx) error { return store.Amend(tx, c, res, m.now()) }); err != nil {
			// The deliveries are queued and attempted; only a repeat's
			// answer stays the queued one.
			m.log.Warn("the outcome of a keyed event trigger was not recorded", "event_type", eventType, "error", err)
		}
	}
	return res, nil
}

// DeliveryResult is deliver's result.
type DeliveryResult struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"statusCode"`
	Attempts   int    `json:"attempts"`
	Duration   int64  `json:"duration"`
	DeliveryID string `json:"deliveryId"`
	Error      string `json:"error,omitempty"`
}

// Deliver sends one event to one webhook now, retrying with backoff within
// the call (waiting through Options.Sleep), and records the delivery in the
// history and the webhook's stats.
func (m *Manager) Deliver(ctx context.Context, w *Webhook, ev store.Event) (*DeliveryResult, error) {
	ts := formatTime(m.now())
	d := &Delivery{ID: newDeliveryID(), WebhookID: w.ID, EventID: ev.ID, EventType: ev.Type, Payload: body(ev), Status: DeliveryPending, CreatedAt: ts, UpdatedAt: ts}
	start := time.Now()
	var o outcome
	for n := 1; ; n++ {
		o = m.attempt(ctx, w, d, n)
		d.Attempts = n
		if o.ok() || n > w.Config.MaxRetries || ctx.Err() != nil {
			break
		}
		if err := m.sleep(ctx, m.backoff.Delay(n)); err != nil {
			break
		}
	}
	d.Status = DeliveryFailed
	if o.ok() {
		d.Status = DeliveryDelivered
	}
	d.StatusCode, d.Duration, d.LastError, d.UpdatedAt = o.StatusCode, o.Duration.Milliseconds(), o.Err, formatTime(m.now())
	if err := m.record(d, true); err != nil {
		return nil, err
	}
	return &DeliveryResult{Success: o.ok(), StatusCode: o.StatusCode, Attempts: d.Attempts, Duration: time.Since(start).Milliseconds(), DeliveryID: d.ID, Error: o.Err}, nil
}

// record stores a finished delivery and, with stats, counts it on its
// webhook.
func (m *Manager) record(d *Delivery, stats bool) error { return m.recordAs(d, stats, nil, nil) }

// recordAs is record that, under a keyed call c, also amends c's recorded
// outcome to v in the same transaction.
func (m *Manager) recordAs(d *Delivery, stats bool, c *store.Call, v any) error {
	return internal(m.st.Update(func(tx store.Tx) error {
		if err := putDelivery(tx, d); err != nil {
			return err
		}
		if err := store.Amend(tx, c, v, m.now()); err != nil {
			return err
		}
		if err := addHistory(tx, d); err != nil {
			return err
		}
		if !stats {
			return nil
		}
		w, err := getWebhook(tx, d.WebhookID)
		if err != nil || w == nil {
			return err
		}
		w.UpdateStats(d.Status == DeliveryDelivered, m.now())
		return putWebhook(tx, w)
	}))
}

// TestResult is testWebhook's result.
type TestResult struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"statusCode"`
	Duration   int64  `json:"duration"`
	DeliveryID string `json:"deliveryId"`
	Error      string `json:"error,omitempty"`
}

// TestWebhook sends one webhook.test ping (no retries, whatever the
// webhook's status and subscription) and records it in the history
// without touching the stats. nil for an unknown webhook.
func (m *Manager) TestWebhook(ctx context.Context, id string) (*TestResult, error) {
	return m.testWebhook(ctx, id, nil)
}

// InterruptedTest is the outcome a repeat of a keyed webhook test gets
// when the first call stopped between its ping and recording the response.
const InterruptedTest = "the first attempt of this call stopped before its response was recorded; its ping was sent at most once. Call admin_webhook_test again with a new idempotency key to test the endpoint"

// testWebhook under a keyed call records the call before the ping (as
// interrupted) and its response after, so a repeat never pings again.
func (m *Manager) testWebhook(ctx context.Context, id string, c *store.Call) (*TestResult, error) {
	w, err := m.GetWebhook(id)
	if err != nil || w == nil {
		return nil, err
	}
	now := m.now()
	ev := store.Event{ID: "evt_" + newDeliveryID()[4:], Type: TestEventType, Source: "admin", Time: formatTime(now),
		Data: json.RawMessage(fmt.Sprintf(`{"webhook_id":%q,"message":"cairn webhook test"}`, id))}
	ts := formatTime(now)
	d := &Delivery{ID: newDeliveryID(), WebhookID: id, EventID: ev.ID, EventType: ev.Type, Payload: body(ev), CreatedAt: ts, UpdatedAt: ts, Test: true}
	if c.Keyed() {
		if err := m.st.Update(func(tx store.Tx) error {
			_, err := store.Once(tx, c, now, func() (*TestResult, error) {
				return &TestResult{DeliveryID: d.ID, Error: InterruptedTest}, nil
			})
			return err
		}); err != nil {
			return nil, internal(err)
		}
		if c.Replayed() != nil {
			return nil, nil
		}
	}
	o := m.attempt(ctx, w, d, 1)
	d.Attempts, d.StatusCode, d.Duration, d.LastError = 1, o.StatusCode, o.Duration.Milliseconds(), o.Err
	d.Status = DeliveryFailed
	if o.ok() {
		d.Status = DeliveryDelivered
	}
	res := &TestResult{Success: o.ok(), StatusCode: o.StatusCode, Duration: d.Duration, DeliveryID: d.ID, Error: o.Err}
	if err := m.recordAs(d, false, c, res); err != nil {
		return nil, err
	}
	return res, nil
}

// HistoryOptions filter getDeliveryHistory.
type HistoryOptions struct {
	Status string `json:"status,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// GetDeliveryHistory lists a webhook's deliveries, newest first (default
// 50, at most 500).
func (m *Manager) GetDeliveryHistory(webhookID string, o HistoryOptions) ([]Delivery, error) {
	switch o.Status {
	case "", DeliveryPending, DeliveryHeld, DeliveryDelivered, DeliveryFailed, DeliveryCancelled, DeliveryExpired:
	default:
		return nil, errs.Invalidf("status", "enum", "status must be one of pending, held, delivered, failed, cancelled, expired (got %q)", o.Status)
	}
	if o.Limit < 0 || o.Limit > 500 || o.Offset < 0 {
		return nil, errs.Invalid("limit", "maximum", "limit must be between 1 and 500 and offset at least 0")
	}
	if o.Limit == 0 {
		o.Limit = 50
	}
	out := []Delivery{}
	err := m.st.View(func(tx store.Tx) error {
		prefix := store.Key([]byte(webhookID), nil)
		c := tx.Bucket([]byte(store.BucketDeliveryByHook)).Cursor()
		// Seek past the prefix's last key, then walk back.
		end := append(append([]byte(nil), prefix...), 0xff)
		k, _ := c.Seek(end)
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		skipped := 0
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < o.Limit; k, _ = c.Prev() {
			d, err := getDelivery(tx, string(k[len(prefix)+9:]))
			if err != nil {
				return err
			}
			if d == nil || (o.Status != "" && d.Status != o.Status) {
				continue
			}
			if skipped < o.Offset {
				skipped++
				continue
			}
			d.Claim, d.Due = "", 0
			out = append(out, *d)
		}
		return nil
	})
	return out, internal(err)
}

// DeliveryStats is getDeliveryStats' result. SuccessRate is the percentage
// of finished deliveries that succeeded; AverageResponseTime is in ms.
type DeliveryStats struct {
	TotalDeliveries     int            `json:"totalDeliveries"`
	Delivered           int            `json:"delivered"`
	Failed              int            `json:"failed"`
	Pending             int            `json:"pending"`
	Held                int            `json:"held"`
	Expired             int            `json:"expired"`
	SuccessRate         float64        `json:"successRate"`
	AverageResponseTime float64        `json:"averageResponseTime"`
	FailuresByWebhook   map[string]int `json:"failuresByWebhook"`
}

// GetDeliveryStats summarizes every recorded delivery.
func (m *Manager) GetDeliveryStats() (*DeliveryStats, error) { return m.GetDeliveryStatsWhere(nil) }

// GetDeliveryStatsWhere summarizes the deliveries of the webhooks keep
// accepts by id (all when nil).
func (m *Manager) GetDeliveryStatsWhere(keep func(webhookID string) bool) (*DeliveryStats, error) {
	s := &DeliveryStats{FailuresByWebhook: map[string]int{}}
	var sum int64
	var timed int
	err := m.st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketDeliveries)).ForEach(func(_, v []byte) error {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			if keep != nil && !keep(d.WebhookID) {
				return nil
			}
			switch d.Status {
			case DeliveryDelivered:
				s.Delivered++
			case DeliveryFailed:
				s.Failed++
				s.FailuresByWebhook[d.WebhookID]++
			case DeliveryPending:
				s.Pending++
				return nil
			case DeliveryHeld:
				s.Held++
				return nil
			case DeliveryExpired:
				s.Expired++
				return nil
			default:
				return nil
			}
			if d.Attempts > 0 {
				sum += d.Duration
				timed++
			}
			return nil
		})
	})
	s.TotalDeliveries = s.Delivered + s.Failed
	if s.TotalDeliveries > 0 {
		s.SuccessRate = float64(int(float64(s.Delivered)/float64(s.TotalDeliveries)*10000)) / 100
	}
	if timed > 0 {
		s.AverageResponseTime = float64(sum) / float64(timed)
	}
	return s, internal(err)
}
