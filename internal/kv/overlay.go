package kv

import (
	"bytes"
	"maps"

	"github.com/google/btree"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The overlay: on a journaled bbolt store (journaled.go) a transaction reads
// three layers, newest first: its own changes, the commits that are in the
// journal but not yet checkpointed into the file (the memtable), and the
// file, read in one bbolt read transaction. Writes go to the first layer
// only; a commit turns it into a journal record and a new memtable.

// entry is one key's latest change in a layer: a nil value deletes.
type entry struct {
	key, value []byte
	// seq is the journal record that made the change (memtable only).
	seq uint64
}

func entryLess(a, b entry) bool { return bytes.Compare(a.key, b.key) < 0 }

// treeDegree keeps nodes about a cache line's worth of entries wide.
const treeDegree = 16

func newTree() *btree.BTreeG[entry] { return btree.NewG(treeDegree, entryLess) }

// layer is one bucket's changes in one layer.
type layer struct {
	tree *btree.BTreeG[entry]
	// cleared hides the layers below: the bucket was cleared here.
	cleared bool
	// clearedAt is the record that cleared it (memtable only).
	clearedAt uint64
}

// nearest is l's first entry past k in direction dir (+1 forward, -1
// backward), or at k when incl; an empty k means from that end.
func (l *layer) nearest(dir int, k []byte, incl bool) (e entry, ok bool) {
	if len(k) == 0 {
		if dir > 0 {
			return l.tree.Min()
		}
		return l.tree.Max()
	}
	visit := func(x entry) bool {
		if !incl && bytes.Equal(x.key, k) {
			return true
		}
		e, ok = x, true
		return false
	}
	if dir > 0 {
		l.tree.AscendGreaterOrEqual(entry{key: k}, visit)
	} else {
		l.tree.DescendLessOrEqual(entry{key: k}, visit)
	}
	return e, ok
}

// memtable is the journaled commits not yet in the file: per bucket, each
// key's latest change. A published memtable is never changed; a commit or a
// checkpoint publishes a new one that shares the unchanged trees.
type memtable struct {
	buckets map[string]*layer
	// seq is the last record it holds; base the checkpoint it sits on,
	// the file holding every record up to base.
	seq, base uint64
}

// with is m plus one committed transaction's changes, as record seq.
func (m *memtable) with(own map[string]*layer, seq uint64) *memtable {
	n := &memtable{buckets: maps.Clone(m.buckets), seq: seq, base: m.base}
	if n.buckets == nil {
		n.buckets = map[string]*layer{}
	}
	for name, ol := range own {
		if ol.tree.Len() == 0 && !ol.cleared {
			continue
		}
		old := n.buckets[name]
		nl := &layer{}
		switch {
		case ol.cleared:
			nl.tree, nl.cleared, nl.clearedAt = newTree(), true, seq
		case old != nil:
			// Clone is copy-on-write: the published tree is never written.
			nl.tree, nl.cleared, nl.clearedAt = old.tree.Clone(), old.cleared, old.clearedAt
		default:
			nl.tree = newTree()
		}
		ol.tree.Ascend(func(e entry) bool {
			e.seq = seq
			nl.tree.ReplaceOrInsert(e)
			return true
		})
		n.buckets[name] = nl
	}
	return n
}

// retire is m without what the checkpoint of record upto put in the file:
// the changes made by records up to it and not changed again since.
func (m *memtable) retire(upto uint64) *memtable {
	n := &memtable{buckets: map[string]*layer{}, seq: m.seq, base: upto}
	for name, l := range m.buckets {
		nl := &layer{tree: newTree()}
		if l.cleared && l.clearedAt > upto {
			nl.cleared, nl.clearedAt = true, l.clearedAt
		}
		l.tree.Ascend(func(e entry) bool {
			if e.seq > upto {
				nl.tree.ReplaceOrInsert(e)
			}
			return true
		})
		if nl.tree.Len() > 0 || nl.cleared {
			n.buckets[name] = nl
		}
	}
	return n
}

// applyTo writes layers into the file's transaction: a cleared bucket is
// cleared first, then every change in key order.
func applyTo(btx *bolt.Tx, buckets map[string]*layer) error {
	for name, l := range buckets {
		if l.cleared {
			if err := boltClear(btx, []byte(name)); err != nil {
				return err
			}
		}
		bb := btx.Bucket([]byte(name))
		if bb == nil {
			if l.tree.Len() == 0 {
				continue
			}
			return bolterrors.ErrBucketNotFound
		}
		var err error
		l.tree.Ascend(func(e entry) bool {
			if e.value == nil {
				err = bb.Delete(e.key)
			} else {
				err = bb.Put(e.key, e.value)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ovTx is a transaction of a journaled store.
type ovTx struct {
	btx *bolt.Tx
	mem *memtable
	// own holds the transaction's changes; nil in a view.
	own   map[string]*layer
	arena []byte
}

// empty is the value of a key stored with no bytes: present, so not nil.
var empty = []byte{}

// keep copies p into the transaction's arena: a committed change outlives
// the caller's buffers, in the memtable.
func (t *ovTx) keep(p []byte) []byte {
	if len(p) == 0 {
		return empty
	}
	if len(p) > cap(t.arena)-len(t.arena) {
		t.arena = make([]byte, 0, max(4096, len(p)))
	}
	off := len(t.arena)
	t.arena = append(t.arena, p...)
	return t.arena[off:len(t.arena):len(t.arena)]
}

func (t *ovTx) ownLayer(name string) *layer {
	l := t.own[name]
	if l == nil {
		l = &layer{tree: newTree()}
		t.own[name] = l
	}
	return l
}

func (t *ovTx) bucket(name []byte) Bucket {
	bb := t.btx.Bucket(name)
	if bb == nil {
		return Bucket{}
	}
	if t.own == nil && t.mem.buckets[string(name)] == nil {
		// A view of a bucket with no journaled change reads the file as
		// it stands, at bbolt's own speed.
		return Bucket{bolt: bb}
	}
	return Bucket{ov: &ovBucket{t: t, name: string(name), bb: bb}}
}

func (t *ovTx) clear(name []byte) error {
	if t.own == nil {
		return bolterrors.ErrTxNotWritable
	}
	if t.btx.Bucket(name) == nil {
		return bolterrors.ErrBucketNotFound
	}
	t.own[string(name)] = &layer{tree: newTree(), cleared: true}
	return nil
}

// changed reports whether the transaction wrote anything.
func (t *ovTx) changed() bool {
	for _, l := range t.own {
		if l.cleared || l.tree.Len() > 0 {
			return true
		}
	}
	return false
}

type ovBucket struct {
	t    *ovTx
	name string
	bb   *bolt.Bucket
}

// layers are the bucket's overlay layers (nil where it has none) and
// whether the file's pairs show through them.
func (b *ovBucket) layers() (own, mem *layer, file bool) {
	own = b.t.own[b.name]
	if own != nil && own.cleared {
		return own, nil, false
	}
	mem = b.t.mem.buckets[b.name]
	return own, mem, mem == nil || !mem.cleared
}

func (b *ovBucket) get(key []byte) []byte {
	own, mem, file := b.layers()
	for _, l := range [2]*layer{own, mem} {
		if l == nil {
			continue
		}
		if e, ok := l.tree.Get(entry{key: key}); ok {
			return e.value
		}
	}
	if !file {
		return nil
	}
	return b.bb.Get(key)
}

func (b *ovBucket) writable() error {
	if b.t.own == nil {
		return bolterrors.ErrTxNotWritable
	}
	return nil
}

func (b *ovBucket) put(key, value []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	// bbolt's own limits, checked now: a change the checkpoint could not
	// write must fail here, in its caller's transaction.
	switch {
	case len(key) == 0:
		return bolterrors.ErrKeyRequired
	case len(key) > bolt.MaxKeySize:
		return bolterrors.ErrKeyTooLarge
	case int64(len(value)) > bolt.MaxValueSize:
		return bolterrors.ErrValueTooLarge
	}
	b.t.ownLayer(b.name).tree.ReplaceOrInsert(entry{key: b.t.keep(key), value: b.t.keep(value)})
	return nil
}

func (b *ovBucket) delete(key []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	if len(key) == 0 {
		return nil
	}
	own := b.t.own[b.name]
	if b.get(key) == nil && (own == nil || !own.tree.Has(entry{key: key})) {
		return nil // nowhere to delete it from
	}
	b.t.ownLayer(b.name).tree.ReplaceOrInsert(entry{key: b.t.keep(key)})
	return nil
}

func (b *ovBucket) count() int {
	own, mem, _ := b.layers()
	if own == nil && mem == nil {
		return b.bb.Stats().KeyN
	}
	n := 0
	c := &ovCursor{b: b, bc: b.bb.Cursor()}
	for k, _ := c.first(); k != nil; k, _ = c.next() {
		n++
	}
	return n
}

// ovCursor walks the merged layers. It keeps its position as a key, so a
// change the transaction makes under it is seen by the next move; the
// file's cursor is moved only as far as the walk needs.
type ovCursor struct {
	b  *ovBucket
	bc *bolt.Cursor
	// The file's cursor stands at bk, the first pair past bq (at bq when
	// bincl) in direction bdir (+1 forward, -1 backward, 0 not placed).
	bk, bv []byte
	bq     []byte
	bincl  bool
	bdir   int
	// cur is the pair last returned; off is +1 or -1 once a move ran off
	// that end (0 while on a pair or before the first move).
	cur []byte
	off int
}

func (c *ovCursor) first() ([]byte, []byte) { return c.forward(nil, true) }
func (c *ovCursor) last() ([]byte, []byte)  { return c.backward(nil, true) }

func (c *ovCursor) seek(k []byte) ([]byte, []byte) {
	return c.forward(bytes.Clone(k), true)
}

func (c *ovCursor) next() ([]byte, []byte) {
	switch {
	case c.cur != nil:
		return c.forward(c.cur, false)
	case c.off < 0:
		return c.first()
	}
	return nil, nil
}

func (c *ovCursor) prev() ([]byte, []byte) {
	switch {
	case c.cur != nil:
		return c.backward(c.cur, false)
	case c.off > 0:
		return c.last()
	}
	return nil, nil
}

func (c *ovCursor) delete() error {
	if c.cur == nil {
		return nil
	}
	return c.b.delete(c.cur)
}

func (c *ovCursor) forward(k []byte, incl bool) ([]byte, []byte)  { return c.move(1, k, incl) }
func (c *ovCursor) backward(k []byte, incl bool) ([]byte, []byte) { return c.move(-1, k, incl) }

// move goes to the first visible pair past k in direction dir (at k when
// incl): the nearest of the layers' candidates, the newer layer's on a
// tie, looking past a deleted key.
func (c *ovCursor) move(dir int, k []byte, incl bool) ([]byte, []byte) {
	for {
		own, mem, file := c.b.layers()
		var best entry
		have, fromFile := false, false
		for _, l := range [2]*layer{own, mem} {
			if l == nil {
				continue
			}
			if e, ok := l.nearest(dir, k, incl); ok && (!have || bytes.Compare(e.key, best.key)*dir < 0) {
				best, have = e, true
			}
		}
		if file {
			var fk, fv []byte
			if dir > 0 {
				fk, fv = c.fileAfter(k, incl)
			} else {
				fk, fv = c.fileBefore(k, incl)
			}
			if fk != nil && (!have || bytes.Compare(fk, best.key)*dir < 0) {
				best, have, fromFile = entry{key: fk, value: fv}, true, true
			}
		}
		if !have {
			c.cur, c.off = nil, dir
			return nil, nil
		}
		if !fromFile && best.value == nil {
			k, incl = best.key, false // deleted: look past it
			continue
		}
		c.cur, c.off = best.key, 0
		return best.key, best.value
	}
}

// covers reports whether the file cursor's last query in direction dir
// reached at least as far as the query (k, incl): then every file key the
// new query wants is at or past bk.
func (c *ovCursor) covers(dir int, k []byte, incl bool) bool {
	if c.bdir != dir || len(c.bq) == 0 || len(k) == 0 {
		return false
	}
	cmp := bytes.Compare(k, c.bq) * dir
	return cmp > 0 || (cmp == 0 && (c.bincl || !incl))
}

// fileAfter is the file's first pair past k (at k when incl).
func (c *ovCursor) fileAfter(k []byte, incl bool) ([]byte, []byte) {
	if c.covers(1, k, incl) {
		if c.bk == nil {
			return nil, nil
		}
		switch cmp := bytes.Compare(c.bk, k); {
		case cmp > 0, cmp == 0 && incl:
			c.bq, c.bincl = k, incl
			return c.bk, c.bv
		case cmp == 0:
			c.bk, c.bv = c.bc.Next()
			c.bq, c.bincl = k, incl
			return c.bk, c.bv
		}
	}
	if len(k) == 0 {
		c.bk, c.bv = c.bc.First()
	} else {
		c.bk, c.bv = c.bc.Seek(k)
		if c.bk != nil && !incl && bytes.Equal(c.bk, k) {
			c.bk, c.bv = c.bc.Next()
		}
	}
	c.bq, c.bincl, c.bdir = k, incl, 1
	if len(k) == 0 {
		c.bdir = 0 // First: no query key to compare later ones with
	}
	return c.bk, c.bv
}

// fileBefore is the file's last pair before k (at k when incl).
func (c *ovCursor) fileBefore(k []byte, incl bool) ([]byte, []byte) {
	if c.covers(-1, k, incl) {
		if c.bk == nil {
			return nil, nil
		}
		switch cmp := bytes.Compare(c.bk, k); {
		case cmp < 0, cmp == 0 && incl:
			c.bq, c.bincl = k, incl
			return c.bk, c.bv
		case cmp == 0:
			c.bk, c.bv = c.bc.Prev()
			c.bq, c.bincl = k, incl
			return c.bk, c.bv
		}
	}
	if len(k) == 0 {
		c.bk, c.bv = c.bc.Last()
		c.bq, c.bincl, c.bdir = nil, incl, 0
		return c.bk, c.bv
	}
	c.bk, c.bv = c.bc.Seek(k)
	switch {
	case c.bk == nil:
		c.bk, c.bv = c.bc.Last()
	case bytes.Compare(c.bk, k) > 0 || (!incl && bytes.Equal(c.bk, k)):
		c.bk, c.bv = c.bc.Prev()
	}
	c.bq, c.bincl, c.bdir = k, incl, -1
	return c.bk, c.bv
}

func (b *ovBucket) cursor() *ovCursor { return &ovCursor{b: b, bc: b.bb.Cursor()} }
