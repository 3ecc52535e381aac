package kv

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Journaled is a bbolt store whose commits go to a journal (journal.go)
// and are written into the file by checkpoints, many commits in one
// (docs/decisions.md D47). A bbolt commit writes every page on the path
// from each changed key to the root, and the meta page, with two fsyncs: a
// task write that touches twenty buckets rewrote a dozen pages, about 50 KB,
// to change 2 KB. A journal record is those 2 KB and one fdatasync; the
// checkpoint writes the pages of 64 commits at once, sharing most of them,
// in the background while writers go on.
//
// An acknowledged commit is in the journal, made durable, before it is
// answered, and readers see it only then. Opening a store replays the
// journal's records the file lacks and checkpoints them; Close checkpoints
// everything, so a file at rest after Close holds every commit.
type Journaled struct {
	db   *bolt.DB
	path string
	id   [16]byte

	// mem is the published memtable, read by every transaction's start.
	mem atomic.Pointer[memtable]
	// memMu orders the memtable's replacements: commits and retirements.
	memMu sync.Mutex

	// writeMu makes one update at a time; it guards the fields below.
	writeMu sync.Mutex
	segs    [2]*segment
	cur     int
	// otherFree: the segment not in use holds no record the file lacks.
	otherFree bool
	seq       uint64
	closed    bool
	quiet     *time.Timer

	// ckpt runs one checkpoint at a time; done is closed when it ends.
	ckptRunning bool
	ckptDone    chan struct{}
	ckptErr     error
	checkpoints atomic.Uint64

	// Checkpoint policy; tests lower them.
	CheckpointRecords int
	CheckpointBytes   int64
	QuietCheckpoint   time.Duration
	// Skipped says what the replay at open left out and why.
	Skipped []string
}

// The default checkpoint policy: after 64 records, or 512 KB of them, or
// 30 s without a commit (the deferred index flush's quiet, so an agent
// that writes now and then shares a checkpoint among 64 writes too); a
// record over directRecord goes into the file at once (an import's
// thousands of tasks gain nothing from the journal).
const (
	defaultCheckpointRecords = 64
	defaultCheckpointBytes   = 512 << 10
	defaultQuiet             = 30 * time.Second
	directRecord             = 1 << 20
	// memLimit bounds the memtable while checkpoints fail: past it every
	// commit writes into the file itself, or fails with its error.
	memLimit = 256 << 20
)

// journalBucket holds the journal's state in the file: the store's journal
// id and the last record a checkpoint wrote into the file.
const journalBucket = "kv_journal"

var (
	keyJournalID  = []byte("id")
	keyJournalSeq = []byte("seq")
)

// OpenJournaled puts a journal in front of db, the bbolt file at path
// opened for writing. Records of an earlier run the file lacks are
// replayed and checkpointed now.
func OpenJournaled(db *bolt.DB, path string) (*Journaled, error) {
	j := &Journaled{db: db, path: path, CheckpointRecords: defaultCheckpointRecords, CheckpointBytes: defaultCheckpointBytes, QuietCheckpoint: defaultQuiet}
	var at uint64
	found := false
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(journalBucket)); b != nil {
			if id := b.Get(keyJournalID); len(id) == 16 {
				copy(j.id[:], id)
				found = true
			}
			if s := b.Get(keyJournalSeq); len(s) == 8 {
				at = binary.BigEndian.Uint64(s)
			}
		}
		return nil
	})
	if !found {
		if _, err := rand.Read(j.id[:]); err != nil {
			return nil, err
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(journalBucket))
			if err != nil {
				return err
			}
			return b.Put(keyJournalID, j.id[:])
		}); err != nil {
			return nil, fmt.Errorf("start the journal of %s: %w", path, err)
		}
	}
	uses, err := readSegments(path)
	if err != nil {
		return nil, fmt.Errorf("read the journal of %s: %w", path, err)
	}
	run, skipped := replayable(uses, j.id, at)
	j.Skipped = skipped
	m := &memtable{buckets: map[string]*layer{}, seq: at, base: at}
	for _, r := range run {
		m = m.with(r.own, r.seq)
	}
	if len(run) > 0 {
		if err := db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, m) }); err != nil {
			return nil, fmt.Errorf("replay the journal of %s: %w", path, err)
		}
		at = m.seq
	}
	j.seq = at
	j.mem.Store(&memtable{buckets: map[string]*layer{}, seq: at, base: at})
	j.otherFree = true
	return j, nil
}

// checkpointInto writes m into the file's transaction, with its number.
func checkpointInto(tx *bolt.Tx, m *memtable) error {
	if err := applyTo(tx, m.buckets); err != nil {
		return err
	}
	b, err := tx.CreateBucketIfNotExists([]byte(journalBucket))
	if err != nil {
		return err
	}
	return b.Put(keyJournalSeq, binary.BigEndian.AppendUint64(nil, m.seq))
}

// fileSeq is the last record the file's transaction holds.
func fileSeq(tx *bolt.Tx) uint64 {
	if b := tx.Bucket([]byte(journalBucket)); b != nil {
		if s := b.Get(keyJournalSeq); len(s) == 8 {
			return binary.BigEndian.Uint64(s)
		}
	}
	return 0
}

// begin opens the file's read transaction and the memtable that goes with
// it: the file holds every record up to the memtable's base, and the
// memtable every later one.
func (j *Journaled) begin() (*bolt.Tx, *memtable, error) {
	for {
		m := j.mem.Load()
		btx, err := j.db.Begin(false)
		if err != nil {
			return nil, nil, err
		}
		// A checkpoint that landed after m was loaded is harmless when m
		// holds its records (they read the same from either); otherwise
		// the newer memtable does, unless a later checkpoint retired
		// records this file transaction lacks: then start again.
		s := fileSeq(btx)
		if s > m.seq {
			m = j.mem.Load()
		}
		if m.base <= s && s <= m.seq {
			return btx, m, nil
		}
		_ = btx.Rollback()
	}
}

// View runs fn on a consistent snapshot.
func (j *Journaled) View(fn func(tx Tx) error) error {
	btx, m, err := j.begin()
	if err != nil {
		return err
	}
	defer func() { _ = btx.Rollback() }()
	return fn(Tx{ov: &ovTx{btx: btx, mem: m}})
}

// errClosed answers an update after Close.
var errClosed = errors.New("store: the journaled store is closed")

// Update runs fn as one transaction and commits it durably: a journal
// record, or for a large one a commit of the file. fn's error discards its
// changes.
func (j *Journaled) Update(fn func(tx Tx) error) error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if j.closed {
		return errClosed
	}
	btx, m, err := j.begin()
	if err != nil {
		return err
	}
	t := &ovTx{btx: btx, mem: m, own: map[string]*layer{}}
	err = fn(Tx{ov: t})
	_ = btx.Rollback()
	if err != nil || !t.changed() {
		return err
	}
	seq := j.seq + 1
	rec := encodeRecord(seq, t.own)
	if len(rec) > directRecord || int64(m.entries()) > memLimit/64 {
		return j.direct(t.own, seq)
	}
	if err := j.append(rec, seq); err != nil {
		// The journal failed (a full disk, an I/O error): the commit goes
		// into the file, or fails with the file's error.
		if derr := j.direct(t.own, seq); derr != nil {
			return fmt.Errorf("%w (the journal failed first: %v)", derr, err)
		}
		return nil
	}
	j.seq = seq
	j.memMu.Lock()
	j.mem.Store(j.mem.Load().with(t.own, seq))
	j.memMu.Unlock()
	j.maybeCheckpoint()
	return nil
}

// append writes rec to the segment in use, opening the segments first.
func (j *Journaled) append(rec []byte, seq uint64) error {
	if j.segs[0] == nil {
		for i := range j.segs {
			s, err := openSegment(segmentPath(j.path, i))
			if err != nil {
				j.closeSegments()
				return err
			}
			j.segs[i] = s
		}
		if err := j.segs[j.cur].begin(j.id, j.mem.Load().base); err != nil {
			return err
		}
	}
	return j.segs[j.cur].append(rec, seq)
}

func (j *Journaled) closeSegments() {
	for i, s := range j.segs {
		if s != nil {
			_ = s.f.Close()
			j.segs[i] = nil
		}
	}
}

// direct commits own (record seq) into the file, with every journaled
// record before it: the journal then holds nothing the file lacks.
func (j *Journaled) direct(own map[string]*layer, seq uint64) error {
	j.waitCheckpoint()
	m := j.mem.Load().with(own, seq)
	if err := j.db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, m) }); err != nil {
		return err
	}
	j.checkpoints.Add(1)
	j.seq = seq
	j.memMu.Lock()
	j.mem.Store(&memtable{buckets: map[string]*layer{}, seq: seq, base: seq})
	j.memMu.Unlock()
	j.otherFree = true
	if j.segs[0] != nil {
		// A fresh use: the records in the current one are all in the file.
		_ = j.segs[j.cur].begin(j.id, seq)
	}
	return nil
}

// maybeCheckpoint starts a checkpoint when the policy says so, and arms
// the quiet one; writeMu is held.
func (j *Journaled) maybeCheckpoint() {
	m := j.mem.Load()
	due := int(m.seq-m.base) >= j.CheckpointRecords || j.segs[j.cur].off >= j.CheckpointBytes
	if due && !j.ckptRunning {
		j.startCheckpoint()
	}
	if j.QuietCheckpoint > 0 {
		if j.quiet == nil {
			j.quiet = time.AfterFunc(j.QuietCheckpoint, j.quietCheckpoint)
		} else {
			j.quiet.Reset(j.QuietCheckpoint)
		}
	}
}

func (j *Journaled) quietCheckpoint() {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if m := j.mem.Load(); !j.closed && !j.ckptRunning && m.seq > m.base {
		j.startCheckpoint()
	}
}

// startCheckpoint moves the writers to the other segment when it is free
// and writes the memtable into the file in the background; writeMu is
// held.
func (j *Journaled) startCheckpoint() {
	m := j.mem.Load()
	if j.otherFree && j.segs[0] != nil {
		other := 1 - j.cur
		if err := j.segs[other].begin(j.id, m.base); err == nil {
			j.cur, j.otherFree = other, false
		}
	}
	j.ckptRunning = true
	j.ckptDone = make(chan struct{})
	go j.checkpoint(m, j.ckptDone)
}

// checkpoint writes m into the file, then retires what it wrote from the
// memtable. The segment the writers left holds only records up to m's,
// so it is free once the file's commit is durable.
func (j *Journaled) checkpoint(m *memtable, done chan struct{}) {
	err := j.db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, m) })
	if err == nil {
		j.memMu.Lock()
		j.mem.Store(j.mem.Load().retire(m.seq))
		j.memMu.Unlock()
		j.checkpoints.Add(1)
	}
	j.writeMu.Lock()
	j.ckptRunning, j.ckptErr = false, err
	if err == nil {
		// The segment not in use holds records up to m's at most: those of
		// the use the writers left, or of one an earlier checkpoint that
		// failed left behind, which this one wrote too.
		j.otherFree = true
	}
	close(done)
	j.writeMu.Unlock()
}

// waitCheckpoint waits for the running checkpoint, if any; writeMu is held
// and released while waiting.
func (j *Journaled) waitCheckpoint() {
	for j.ckptRunning {
		done := j.ckptDone
		j.writeMu.Unlock()
		<-done
		j.writeMu.Lock()
	}
}

// Checkpoint writes every journaled commit into the file now and waits
// for it: for a backup or a check of the file itself.
func (j *Journaled) Checkpoint() error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.waitCheckpoint()
	m := j.mem.Load()
	if m.seq == m.base {
		return nil
	}
	j.startCheckpoint()
	j.waitCheckpoint()
	return j.ckptErr
}

// CheckpointErr is the last checkpoint's error, nil once one succeeds:
// while checkpoints fail, commits stay in the journal and the memtable.
func (j *Journaled) CheckpointErr() error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	return j.ckptErr
}

// Checkpoints counts the checkpoints (and direct commits) made since open.
func (j *Journaled) Checkpoints() uint64 { return j.checkpoints.Load() }

// Close checkpoints every commit into the file and closes the segments;
// the caller closes db. Later updates fail.
func (j *Journaled) Close() error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.waitCheckpoint()
	if m := j.mem.Load(); m.seq > m.base {
		j.startCheckpoint()
		j.waitCheckpoint()
	}
	j.closed = true
	if j.quiet != nil {
		j.quiet.Stop()
	}
	j.closeSegments()
	return j.ckptErr
}

// Pending reports whether the journal beside the file at path holds
// records the file lacks, read from the file's own state in db (opened
// read-only): a store a crash left so must be opened for writing once,
// which replays them, before the file alone is copied or checked.
func Pending(db *bolt.DB, path string) (bool, error) {
	uses, err := readSegments(path)
	if err != nil || len(uses) == 0 {
		return false, err
	}
	var id [16]byte
	var at uint64
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(journalBucket)); b != nil {
			copy(id[:], b.Get(keyJournalID))
		}
		at = fileSeq(tx)
		return nil
	})
	run, _ := replayable(uses, id, at)
	return len(run) > 0, nil
}

// RemoveJournal removes the journal beside the file at path: a restore
// puts another file in place, which the journal does not follow.
func RemoveJournal(path string) error {
	for _, name := range JournalFiles(path) {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
