// Package leases is core's mirror of the sdd area's execution leases
// (docs/decisions.md D39). No area opens another's store, so core learns of
// a lease the way it learns of projects: from the sdd area's events on the
// host bus (sdd.lease.issued, sdd.lease.returned), recorded in the core
// store by task, so task_context reads a caller's leases through an index
// in the same store as its tasks.
package leases

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The sdd area's lease events.
const (
	EventIssued   = "sdd.lease.issued"
	EventReturned = "sdd.lease.returned"
)

var bucket = []byte(store.BucketLeases)

// Lease is one open lease as task_context shows it.
type Lease struct {
	LeaseID   string   `json:"lease_id"`
	TaskID    string   `json:"task_id"`
	Scope     []string `json:"scope,omitzero"`
	ExpiresAt string   `json:"expires_at" description:"ISO-8601 UTC."`
}

// event is the sdd area's lease as its events carry it.
type event struct {
	LeaseID    string   `json:"leaseId"`
	TaskID     string   `json:"taskId"`
	Scope      []string `json:"scope"`
	ExpiresAt  string   `json:"expiresAt"`
	ReturnedAt string   `json:"returnedAt"`
}

// key is task id, 0, lease id: a task's leases are one prefix.
func key(taskID, leaseID string) []byte {
	k := make([]byte, 0, len(taskID)+len(leaseID)+1)
	k = append(append(k, taskID...), 0)
	return append(k, leaseID...)
}

// Apply records an issued lease or forgets a returned one, and forgets the
// leases that expired without being returned, so the mirror holds only
// open leases (the sdd area keeps its own history). Redelivery is
// harmless: both are idempotent.
func Apply(st *store.Store, eventType string, data []byte, now time.Time) error {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil || ev.LeaseID == "" || ev.TaskID == "" {
		return errs.Invalidf("data", "required", "%s event without a leaseId and taskId", eventType)
	}
	k := key(ev.TaskID, ev.LeaseID)
	return st.Update(func(tx kv.Tx) error {
		b := tx.Bucket(bucket)
		if err := dropExpired(b, now); err != nil {
			return err
		}
		if eventType == EventReturned || ev.ReturnedAt != "" {
			return b.Delete(k)
		}
		v, err := json.Marshal(Lease{LeaseID: ev.LeaseID, TaskID: ev.TaskID, Scope: ev.Scope, ExpiresAt: ev.ExpiresAt})
		if err != nil {
			return err
		}
		return b.Put(k, v)
	})
}

// ForTasks returns the leases of taskIDs not expired at now, in the order
// of taskIDs, then by lease id. Each task is one prefix read.
func ForTasks(st *store.Store, taskIDs []string, now time.Time) ([]Lease, error) {
	var out []Lease
	err := st.View(func(tx kv.Tx) error {
		var err error
		out, err = ForTasksIn(tx, taskIDs, now)
		return err
	})
	return out, err
}

// ForTasksIn is ForTasks inside tx, for a reader that takes several views
// of the store in one snapshot.
func ForTasksIn(tx kv.Tx, taskIDs []string, now time.Time) ([]Lease, error) {
	out := []Lease{}
	err := func() error {
		b := tx.Bucket(bucket)
		if !b.Exists() {
			return nil
		}
		c := b.Cursor()
		for _, id := range taskIDs {
			prefix := key(id, "")
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				var l Lease
				if json.Unmarshal(v, &l) != nil {
					continue
				}
				if exp, err := time.Parse(time.RFC3339Nano, l.ExpiresAt); err == nil && !exp.After(now) {
					continue
				}
				out = append(out, l)
			}
		}
		return nil
	}()
	return out, err
}

// dropExpired deletes the leases expired at now. Open leases are few (an
// agent holds a handful), so one pass over the bucket per lease event is
// cheap.
func dropExpired(b kv.Bucket, now time.Time) error {
	var gone [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var l Lease
		if json.Unmarshal(v, &l) != nil {
			gone = append(gone, append([]byte(nil), k...))
			continue
		}
		if exp, err := time.Parse(time.RFC3339Nano, l.ExpiresAt); err == nil && !exp.After(now) {
			gone = append(gone, append([]byte(nil), k...))
		}
	}
	for _, k := range gone {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
