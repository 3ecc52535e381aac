package webhooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// Delivery statuses of the hold: an event for a paused webhook is held
// (persisted, in order) until the webhook is resumed; one held longer than
// the retention expires, with the reason in its history entry.
const (
	DeliveryHeld    = "held"
	DeliveryExpired = "expired"
)

// DefaultHeldRetention is how long a held delivery waits for its webhook to
// be resumed.
const DefaultHeldRetention = 7 * 24 * time.Hour

// sweepEvery is how often Run expires held deliveries of webhooks nobody
// resumes.
const sweepEvery = time.Minute

// unfinished reports whether a delivery is still owed to its receiver.
func unfinished(status string) bool { return status == DeliveryPending || status == DeliveryHeld }

// hold turns d into a held delivery (no longer scheduled).
func hold(tx store.Tx, d *Delivery, now time.Time) error {
	if err := unindexDue(tx, d); err != nil {
		return err
	}
	d.Status, d.NextAttemptAt, d.Claim, d.UpdatedAt = DeliveryHeld, "", "", formatTime(now)
	return nil
}

// tooOld reports whether a held delivery has outlived the retention.
func (m *Manager) tooOld(d *Delivery, now time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, d.CreatedAt)
	return err == nil && now.Sub(t) >= m.retain
}

func (m *Manager) expire(d *Delivery, now time.Time) {
	d.Status, d.NextAttemptAt, d.UpdatedAt = DeliveryExpired, "", formatTime(now)
	d.Reason = fmt.Sprintf("held longer than the retention of %s while the webhook was not active; dropped undelivered (resume a paused webhook sooner, or raise webhook_hold_retention)", m.retain)
	d.LastError = d.Reason
}

// releaseHeld schedules a webhook's held deliveries, oldest first, each due
// a nanosecond after the one before (the last one now), so the schedule
// keeps their order; those past the retention expire instead.
func (m *Manager) releaseHeld(tx store.Tx, webhookID string) error {
	now := m.now()
	held := 0
	if err := forHistory(tx, webhookID, func(d *Delivery) (bool, error) {
		if d.Status == DeliveryHeld && !m.tooOld(d, now) {
			held++
		}
		return false, nil
	}); err != nil {
		return err
	}
	i := 0
	err := forHistory(tx, webhookID, func(d *Delivery) (bool, error) {
		if d.Status != DeliveryHeld {
			return false, nil
		}
		if m.tooOld(d, now) {
			m.expire(d, now)
			return true, nil
		}
		d.Status, d.UpdatedAt = DeliveryPending, formatTime(now)
		i++
		return true, indexDue(tx, d, now.Add(-time.Duration(held-i)))
	})
	if err == nil && i > 0 {
		m.Kick()
	}
	return err
}

// ExpireHeld expires the held deliveries older than the retention, of every
// webhook, and returns how many it expired. Run calls it every minute.
func (m *Manager) ExpireHeld() (int, error) {
	n := 0
	err := m.st.Update(func(tx store.Tx) error {
		var ids []string
		if err := tx.Bucket([]byte(store.BucketWebhooks)).ForEach(func(k, v []byte) error {
			w, err := FromJSON(v)
			if err == nil && w.Status != StatusActive {
				ids = append(ids, string(k))
			}
			return err
		}); err != nil {
			return err
		}
		now := m.now()
		for _, id := range ids {
			if err := forHistory(tx, id, func(d *Delivery) (bool, error) {
				if d.Status != DeliveryHeld || !m.tooOld(d, now) {
					return false, nil
				}
				m.expire(d, now)
				n++
				return true, nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return n, internal(err)
}

// sweep runs ExpireHeld when sweepEvery has passed since the last run.
func (m *Manager) sweep() {
	now := m.now().UnixNano()
	last := m.lastSweep.Load()
	if now-last < int64(sweepEvery) || !m.lastSweep.CompareAndSwap(last, now) {
		return
	}
	if _, err := m.ExpireHeld(); err != nil {
		m.log.Warn("expiring held webhook deliveries", "error", err)
	}
}

// EventWorkspace is the workspace an event belongs to: its data's
// workspace_id, else the workspace of the project its data names (project,
// slug or project_slug, as task and project events carry). "" when the
// event belongs to no workspace: only unscoped webhooks receive it.
func EventWorkspace(tx store.Tx, ev store.Event) string {
	var data map[string]any
	if json.Unmarshal(ev.Data, &data) != nil {
		return ""
	}
	if ws, ok := data["workspace_id"].(string); ok && ws != "" {
		return ws
	}
	for _, f := range []string{"project", "slug", "project_slug"} {
		slug, ok := data[f].(string)
		if !ok || slug == "" {
			continue
		}
		id := tx.Bucket([]byte(store.BucketProjectSlug)).Get([]byte(slug))
		if id == nil {
			continue
		}
		var p struct {
			WorkspaceID string `json:"workspace_id"`
		}
		if found, err := store.Get(tx, store.BucketProjects, id, &p); err == nil && found && p.WorkspaceID != "" {
			return p.WorkspaceID
		}
	}
	return ""
}
