package webhooks

// On PostgreSQL the delivery schedule is the queue table (store.QueueTable)
// and claiming takes no admin writer lock: one statement marks up to n due,
// unclaimed (or lapsed) rows as this server's with FOR UPDATE SKIP LOCKED,
// so two servers claiming at once take disjoint rows and neither waits for
// the other. A claim is a lease: claim_until is the attempt's timeout +
// 30 s, after which another server may claim the row again (its server
// died mid-attempt). finish, under the writer lock, records an outcome only
// while the row is still claimed by the same claim, as on bbolt.
//
// Scheduling (a new delivery, a retry, a release of held deliveries) and
// unscheduling happen inside the admin transactions that change the
// delivery records, through the same transaction (store.Tx.SQL).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// maxLease is a claim's first lease, before the webhook's own timeout is
// known: the longest attempt allowed (60 s) + 30 s.
const maxLease = 90 * time.Second

// leaseFor is how long a claim on a delivery to w holds.
func leaseFor(w *Webhook) time.Duration {
	return time.Duration(w.Config.Timeout)*time.Millisecond + 30*time.Second
}

func queueErr(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	return errs.Newf(503, errs.Unavailable, "webhook delivery queue: %v", err)
}

// pgQueue is the queue table inside one admin transaction.
type pgQueue struct {
	ctx context.Context
	tx  kv.SQLConn
}

// queueIn is tx's queue on PostgreSQL, nil on bbolt.
func queueIn(tx store.Tx) (*pgQueue, error) {
	ctx, sqlTx, err := tx.SQL()
	if err != nil || sqlTx == nil {
		return nil, err
	}
	return &pgQueue{ctx, sqlTx}, nil
}

// schedule puts delivery id in the queue, due at due, claimed by owner
// until until when owner is not empty.
func (q *pgQueue) schedule(id string, due time.Time, owner string, until time.Time) error {
	var o, u any
	if owner != "" {
		o, u = owner, until.UnixNano()
	}
	_, err := q.tx.Exec(q.ctx, `INSERT INTO `+store.QueueTable+` (id, due, claim_owner, claim_until) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET due = EXCLUDED.due, claim_owner = EXCLUDED.claim_owner, claim_until = EXCLUDED.claim_until`,
		id, due.UnixNano(), o, u)
	return queueErr(err)
}

func (q *pgQueue) remove(id string) error {
	_, err := q.tx.Exec(q.ctx, "DELETE FROM "+store.QueueTable+" WHERE id = $1", id)
	return queueErr(err)
}

// claimedBy locks delivery id's row and returns its claim ("" when the
// row is unclaimed or gone).
func (q *pgQueue) claimedBy(id string) (string, error) {
	var owner *string
	err := q.tx.QueryRow(q.ctx, "SELECT claim_owner FROM "+store.QueueTable+" WHERE id = $1 FOR UPDATE", id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) || owner == nil {
		return "", nil
	}
	return *owner, queueErr(err)
}

// claimSQL claims up to $3 rows due at $1 for owner $4 until $2.
const claimSQL = `UPDATE ` + store.QueueTable + ` SET claim_owner = $4, claim_until = $2
WHERE id IN (
	SELECT id FROM ` + store.QueueTable + `
	WHERE due <= $1 AND (claim_owner IS NULL OR claim_until <= $1)
	ORDER BY due
	FOR UPDATE SKIP LOCKED
	LIMIT $3
)
RETURNING id, due`

// claimDuePG is claimDue on PostgreSQL: the claim statement, then one read
// of the claimed deliveries and their webhooks; the rows this server will
// not attempt now are settled in one batch (leases shortened to the
// webhook's timeout, rows of a webhook already taken or over its rate
// handed back, rows of finished deliveries dropped), and deliveries whose
// webhook is gone or paused are cancelled or held under the writer lock.
func (m *Manager) claimDuePG(limit int) ([]job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
	defer cancel()
	now := m.now()
	owner := newDeliveryID()
	rows, err := m.pg.Query(ctx, claimSQL, now.UnixNano(), now.Add(maxLease).UnixNano(), limit, owner)
	if err != nil {
		return nil, queueErr(err)
	}
	type claimed struct {
		id  string
		due int64
	}
	var got []claimed
	for rows.Next() {
		var c claimed
		if err := rows.Scan(&c.id, &c.due); err != nil {
			rows.Close()
			return nil, queueErr(err)
		}
		got = append(got, c)
	}
	if err := rows.Err(); err != nil {
		return nil, queueErr(err)
	}
	if len(got) == 0 {
		return nil, nil
	}
	slices.SortFunc(got, func(a, b claimed) int { return int(min(max(a.due-b.due, -1), 1)) })

	var jobs []job
	var settle pgx.Batch
	var stale []string // deliveries to cancel or hold under the lock
	taken := map[string]bool{}
	err = m.st.View(func(tx store.Tx) error {
		for _, c := range got {
			d, err := getDelivery(tx, c.id)
			if err != nil {
				return err
			}
			if d == nil || d.Status != DeliveryPending {
				settle.Queue("DELETE FROM "+store.QueueTable+" WHERE id = $1 AND claim_owner = $2", c.id, owner)
				continue
			}
			w, err := getWebhook(tx, d.WebhookID)
			if err != nil {
				return err
			}
			switch {
			case w == nil || w.Status != StatusActive:
				stale = append(stale, c.id)
			case taken[w.ID] || !m.limits.allow(w, now):
				settle.Queue("UPDATE "+store.QueueTable+" SET claim_owner = NULL, claim_until = NULL WHERE id = $1 AND claim_owner = $2", c.id, owner)
			default:
				taken[w.ID] = true
				settle.Queue("UPDATE "+store.QueueTable+" SET claim_until = $3 WHERE id = $1 AND claim_owner = $2", c.id, owner, now.Add(leaseFor(w)).UnixNano())
				d.Claim = owner
				d.NextAttemptAt = formatTime(now.Add(leaseFor(w)))
				jobs = append(jobs, job{d: d, w: w})
			}
		}
		return nil
	})
	if err != nil {
		return nil, internal(err)
	}
	if settle.Len() > 0 {
		if err := m.pg.SendBatch(ctx, &settle).Close(); err != nil {
			return nil, queueErr(err)
		}
	}
	if len(stale) > 0 {
		if err := m.settleStale(stale, owner, now); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// settleStale cancels (webhook gone) or holds (webhook not active) the
// claimed deliveries ids, each only while still claimed by owner.
func (m *Manager) settleStale(ids []string, owner string, now time.Time) error {
	return internal(m.st.Update(func(tx store.Tx) error {
		q, err := queueIn(tx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if o, err := q.claimedBy(id); err != nil || o != owner {
				if err != nil {
					return err
				}
				continue
			}
			d, err := getDelivery(tx, id)
			if err != nil || d == nil {
				if err == nil {
					err = q.remove(id)
				}
				if err != nil {
					return err
				}
				continue
			}
			w, err := getWebhook(tx, d.WebhookID)
			if err != nil {
				return err
			}
			switch {
			case w == nil:
				if err := unindexDue(tx, d); err != nil {
					return err
				}
				d.Status, d.NextAttemptAt = DeliveryCancelled, ""
			case w.Status != StatusActive:
				if err := hold(tx, d, now); err != nil {
					return err
				}
			default: // resumed meanwhile: due again now
				if err := indexDue(tx, d, now); err != nil {
					return err
				}
			}
			if err := putDelivery(tx, d); err != nil {
				return err
			}
		}
		return nil
	}))
}

// nextDuePG is when the queue's earliest row can next be claimed.
func (m *Manager) nextDuePG() time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
	defer cancel()
	var at *int64
	err := m.pg.QueryRow(ctx, "SELECT min(CASE WHEN claim_owner IS NOT NULL AND claim_until > due THEN claim_until ELSE due END) FROM "+store.QueueTable).Scan(&at)
	if err != nil || at == nil {
		return time.Time{}
	}
	return time.Unix(0, *at)
}
