package kv

import "github.com/jackc/pgx/v5"

// Key names a key of a bucket, for operations on several keys at once.
type Key struct {
	Bucket, Key []byte
	// Keep, for a counter drawn in a shared update, hands a number the
	// attempt drew to the next attempt when the update runs again, so a
	// conflict or a turn alone leaves no gap (see Tx.DrawAhead).
	Keep bool
}

// Prefetch reads keys the transaction is about to read, on PostgreSQL in
// one round trip instead of one each: a write's first reads (its
// idempotency records, the project, the store's settings) are known
// before it starts, and across a network every round trip is time the
// write holds its transaction open. Later Gets of these keys are answered
// from memory. On bbolt, where a read costs no round trip, it does
// nothing.
func (t Tx) Prefetch(keys ...Key) {
	p := t.pg
	if p == nil || p.err != nil || p.peek {
		return
	}
	var buckets []string
	var ks [][]byte
	for _, k := range keys {
		if _, ok := p.keys.get(string(k.Bucket), k.Key); !ok {
			buckets, ks = append(buckets, string(k.Bucket)), append(ks, clone(k.Key))
		}
	}
	if len(ks) == 0 {
		return
	}
	if len(p.cleared) > 0 {
		p.flush()
	}
	found := map[cacheKey][]byte{}
	err := p.query(p.p.sql.getMany, []any{buckets, ks}, func(rows pgx.Rows) error {
		var b string
		var k, v []byte
		if err := rows.Scan(&b, &k, &v); err != nil {
			return err
		}
		if v == nil {
			v = []byte{}
		}
		found[cacheKey{b, string(k)}] = v
		return nil
	})
	if err != nil {
		p.fail(err)
		return
	}
	for i, k := range ks {
		p.keys.read(buckets[i], k, found[cacheKey{buckets[i], string(k)}])
	}
}

// Fresh tells the transaction that key holds nothing, without asking:
// for the keys of a record whose number the transaction has just drawn,
// which no one can have written yet. A later Get answers nil from memory.
// On bbolt it does nothing.
func (b Bucket) Fresh(key []byte) {
	if b.pg == nil {
		return
	}
	if _, ok := b.pg.t.keys.get(b.pg.name, key); !ok {
		b.pg.t.keys.read(b.pg.name, clone(key), nil)
	}
}
