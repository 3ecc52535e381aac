package webhooks

import (
	"encoding/binary"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// Which webhooks a bus event was queued for is remembered apart from the
// delivery history. The history keeps the newest deliveries of a webhook;
// a busy webhook drops a delivery long before a dead server's events are
// published again (after their lease lapses on PostgreSQL, at the next
// start on bbolt), and a mark dropped with it would queue the event again.
//
// Marks live in two generations, each a bucket: a mark goes into the
// current one, and a lookup reads both. When the current generation holds
// byEventKeep marks and its first is byEventWindow old, the previous one is
// cleared whole and becomes the current: every mark is kept for at least
// byEventWindow and at least byEventKeep later marks, and at most two
// generations are stored.
const (
	byEventWindow = 10 * time.Minute
	byEventKeep   = 10_000
)

// byEventKeep as a var, so tests can lower it.
var byEventLimit = byEventKeep

var byEventBuckets = [2]string{store.BucketDeliveryByEvent, store.BucketDeliveryByEventB}

// Meta keys of the generations: the current one's index (one byte), when
// its first mark was made (Unix ms) and how many it holds.
var (
	byEventCurrent = []byte("byevent_current")
	byEventSince   = []byte("byevent_since")
	byEventCount   = []byte("byevent_count")
)

// queuedFor reports whether the event was queued for the webhook.
func queuedFor(tx store.Tx, eventID, webhookID string) bool {
	k := eventHookKey(eventID, webhookID)
	for _, name := range byEventBuckets {
		if tx.Bucket([]byte(name)).Get(k) != nil {
			return true
		}
	}
	return false
}

// markQueued records that the event was queued for the webhook, first
// turning the generations over when the current one is due.
func markQueued(tx store.Tx, now time.Time, eventID, webhookID string) error {
	meta := tx.Bucket([]byte(store.BucketMeta))
	cur := 0
	if v := meta.Get(byEventCurrent); len(v) == 1 && v[0] == 1 {
		cur = 1
	}
	since, count := metaUint(meta, byEventSince), metaUint(meta, byEventCount)
	ms := uint64(now.UnixMilli())
	if count >= uint64(byEventLimit) && ms >= since+uint64(byEventWindow.Milliseconds()) {
		cur = 1 - cur
		if err := tx.Clear([]byte(byEventBuckets[cur])); err != nil {
			return err
		}
		if err := meta.Put(byEventCurrent, []byte{byte(cur)}); err != nil {
			return err
		}
		count = 0
	}
	if count == 0 {
		if err := putMetaUint(meta, byEventSince, ms); err != nil {
			return err
		}
	}
	if err := putMetaUint(meta, byEventCount, count+1); err != nil {
		return err
	}
	return tx.Bucket([]byte(byEventBuckets[cur])).Put(eventHookKey(eventID, webhookID), []byte{1})
}

func metaUint(meta store.Bucket, key []byte) uint64 {
	if v := meta.Get(key); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func putMetaUint(meta store.Bucket, key []byte, n uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return meta.Put(key, b[:])
}
