package kv

import (
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// keyCache is what a PostgreSQL transaction knows of the keys it touched:
// the value it read or wrote last (nil: absent), and which of them it
// changed since they were last sent. An update holds its area's lock, and a
// view reads one snapshot, so a key read once reads the same until the
// transaction changes it: a group commit's calls, which read the same
// counters, chain heads and project records one after another, pay for one
// round trip each, not one per call (docs/decisions.md D40). Changes are
// sent by drain, so a key written many times in a transaction (the task
// counter of a batch of task_create calls) is written once.
type keyCache struct {
	pairs map[cacheKey]*cached
	// changed lists, by bucket, the keys whose change is not yet sent, each
	// once: a range read sends its bucket's alone, without walking the
	// others' (an update may hold thousands).
	changed map[string][]string
}

type cacheKey struct{ bucket, key string }

type cached struct {
	value   []byte
	changed bool
}

// get is the value under key and true when the transaction knows it.
func (c *keyCache) get(bucket string, key []byte) ([]byte, bool) {
	e, ok := c.pairs[cacheKey{bucket, string(key)}]
	if !ok {
		return nil, false
	}
	return e.value, true
}

// read records what the database holds under key (nil: nothing).
func (c *keyCache) read(bucket string, key, value []byte) {
	if c.pairs == nil {
		c.pairs = map[cacheKey]*cached{}
	}
	c.pairs[cacheKey{bucket, string(key)}] = &cached{value: value}
}

// write records a change to key: value, or its deletion when value is nil.
func (c *keyCache) write(bucket string, key, value []byte) {
	if c.pairs == nil {
		c.pairs = map[cacheKey]*cached{}
	}
	k := cacheKey{bucket, string(key)}
	e, ok := c.pairs[k]
	if !ok {
		e = &cached{}
		c.pairs[k] = e
	}
	e.value = value
	if !e.changed {
		e.changed = true
		if c.changed == nil {
			c.changed = map[string][]string{}
		}
		c.changed[bucket] = append(c.changed[bucket], k.key)
	}
}

// forget drops every key of bucket (it is being cleared; any change to it
// was drained before).
func (c *keyCache) forget(bucket string) {
	for k := range c.pairs {
		if k.bucket == bucket {
			delete(c.pairs, k)
		}
	}
}

// drain queues the changed keys of bucket (of every bucket when bucket is
// "") on batch, in key order: every put in one putMany statement and every
// delete in one delMany, each taking arrays of buckets, keys (and values).
// A range read needs only its own bucket's changes in the database, and
// sending only those keeps the other keys' many writes folding into one.
func (c *keyCache) drain(batch *pgx.Batch, putMany, delMany, bucket string) {
	buckets := []string{bucket}
	if bucket == "" {
		buckets = slices.Sorted(maps.Keys(c.changed))
	}
	var putB, delB []string
	var putK, putV, delK [][]byte
	for _, name := range buckets {
		keys := c.changed[name]
		delete(c.changed, name)
		slices.Sort(keys)
		for _, key := range keys {
			e := c.pairs[cacheKey{name, key}]
			e.changed = false
			if e.value == nil {
				delB, delK = append(delB, name), append(delK, []byte(key))
			} else {
				putB, putK, putV = append(putB, name), append(putK, []byte(key)), append(putV, e.value)
			}
		}
	}
	if len(putB) > 0 {
		batch.Queue(putMany, putB, putK, putV)
	}
	if len(delB) > 0 {
		batch.Queue(delMany, delB, delK)
	}
}
