package store

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// Idempotency counts on PostgreSQL (docs/decisions.md D40). A generation's
// count is a row every idempotent write would change, so servers writing
// beside each other (shared updates) would all conflict on it. Instead an
// exclusive update grants each server a few keys at a time, and a server
// records that many keys under its own grant (its shard's row in
// BucketIdempotencyGrants) without touching the
// count. The count plus every grant never exceeds a generation's size, so
// the bounds of idempotency.go hold exactly as on bbolt. A write that
// finds its grant spent, the generation due to turn, or none begun yet asks
// to run alone (kv.Tx.Alone); alone, it folds every grant's keys into the
// count, turns the generation when it is due, records its key and grants
// its server the next keys.

// BucketIdempotencyGrants holds the grants, on PostgreSQL only: shard id
// (8 bytes) → keys used, keys granted and when (unix ms), 8 bytes each.
const BucketIdempotencyGrants = "idempotency_grants"

// idemGrant is how many keys a grant holds at most: a server renews its
// grant, in an exclusive update, once per half as many idempotent writes.
const idemGrant = 256

// keyIdemGranted is the sum of the grants outstanding, in meta.
var keyIdemGranted = []byte("idempotency_granted")

func recordGranted(tx kv.Tx, meta kv.Bucket, k, output []byte, ms uint64, aged bool) error {
	current, previous := generations(meta)
	since := getU64(meta, keyIdemSince)
	grants := tx.Bucket([]byte(BucketIdempotencyGrants))
	shard := tx.Shard()
	g := grantOf(grants.Get(shard))
	isNew := len(tx.Bucket(current).Get(k)) < 8
	if tx.Concurrent() {
		if since == 0 || aged || (isNew && g.used >= g.granted) {
			return tx.Alone()
		}
		if isNew {
			g.used++
			if err := grants.Put(shard, g.value()); err != nil {
				return err
			}
		}
		return putIdem(tx.Bucket(current), k, output, ms)
	}
	count := getU64(meta, keyIdemCount)
	outstanding := getU64(meta, keyIdemGranted)
	// A grant is renewed once half spent: an exclusive run records its
	// batch's keys in the count, so a grant left nearly spent would send
	// every later batch of this server back here.
	if aged || g.granted-min(g.used, g.granted) < idemGrant/2 || count+outstanding+1 > generationKeys {
		// Fold the keys every grant used into the count; this server's
		// grant and those not drawn on for grantIdle end, the others keep
		// what they have left unless the generation needs it.
		var err error
		if count, outstanding, err = foldGrants(tx, grants, shard, count, ms, false); err != nil {
			return err
		}
		// A generation turns only once every grant's keys are counted in
		// it, so none of them is counted in the next.
		if aged || count+outstanding+1 > generationKeys {
			if count, outstanding, err = foldGrants(tx, grants, shard, count, ms, true); err != nil {
				return err
			}
		}
		if aged || count+1 > generationKeys {
			if err := turnGeneration(tx, meta, current, previous); err != nil {
				return err
			}
			current, count, since = previous, 0, 0
			isNew = true
		}
		// This server's next keys.
		n := min(idemGrant, generationKeys-count-outstanding-1)
		if err := grants.Put(shard, grant{granted: n, at: ms}.value()); err != nil {
			return err
		}
		outstanding += n
	}
	if isNew {
		count++
	}
	if since == 0 {
		if err := meta.Put(keyIdemSince, U64(ms)); err != nil {
			return err
		}
	}
	if err := meta.Put(keyIdemCount, U64(count)); err != nil {
		return err
	}
	if err := meta.Put(keyIdemGranted, U64(outstanding)); err != nil {
		return err
	}
	return putIdem(tx.Bucket(current), k, output, ms)
}

// grantIdle is how long a grant stays with a server that does not come
// back for more: a server that stopped leaves its grant behind, and the
// keys it holds are taken back once it is this old.
const grantIdle = 10 * time.Second

// foldGrants adds the keys every grant used to count and returns the keys
// still granted. own's grant ends, and so do all of them when all is set,
// or any given out more than grantIdle before ms; the others keep their
// unused keys.
func foldGrants(tx kv.Tx, grants kv.Bucket, own []byte, count, ms uint64, all bool) (newCount, outstanding uint64, err error) {
	type row struct {
		k []byte
		g grant
	}
	var rows []row
	if err := grants.ForEach(func(k, v []byte) error {
		rows = append(rows, row{bytes.Clone(k), grantOf(v)})
		return nil
	}); err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		count += r.g.used
		ends := all || bytes.Equal(r.k, own) || ms > r.g.at+uint64(grantIdle.Milliseconds())
		if ends {
			err = grants.Delete(r.k)
		} else {
			left := r.g.granted - min(r.g.used, r.g.granted)
			outstanding += left
			err = grants.Put(r.k, grant{granted: left, at: r.g.at}.value())
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return count, outstanding, nil
}

// grantsUsed sums the keys recorded under grants (0 on bbolt).
func grantsUsed(tx kv.Tx) uint64 {
	if !tx.Shared() {
		return 0
	}
	var n uint64
	_ = tx.Bucket([]byte(BucketIdempotencyGrants)).ForEach(func(_, v []byte) error {
		n += grantOf(v).used
		return nil
	})
	return n
}

// grant is one server's: keys used of those granted, and when it was
// given (unix ms).
type grant struct{ used, granted, at uint64 }

func grantOf(v []byte) grant {
	if len(v) != 24 {
		return grant{}
	}
	return grant{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), binary.BigEndian.Uint64(v[16:])}
}

func (g grant) value() []byte {
	v := binary.BigEndian.AppendUint64(nil, g.used)
	v = binary.BigEndian.AppendUint64(v, g.granted)
	return binary.BigEndian.AppendUint64(v, g.at)
}

func putIdem(b kv.Bucket, k, output []byte, ms uint64) error {
	v := make([]byte, 8, 8+len(output))
	binary.BigEndian.PutUint64(v, ms)
	return b.Put(k, append(v, output...))
}
