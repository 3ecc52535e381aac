package kv

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// idInFile: id is in the file, durably, as a replay needs it to be
	// before any record is acknowledged.
	idInFile bool

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
	// pending is the bytes of records since the last checkpoint began.
	pending int64
	seq     uint64
	closed  bool
	quiet   *time.Timer

	// ckpt is the checkpoint started last and not yet taken in (one runs
	// at a time); ckptErr the error of the last one taken in.
	ckpt        *ckptRun
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
	// A store's journal id is made with its first record (append).
	var at uint64
	j.id, j.idInFile, at = journalState(db)
	uses, err := readSegments(path, at)
	if err != nil {
		return nil, fmt.Errorf("read the journal of %s: %w", path, err)
	}
	run, skipped := replayable(uses, j.id, at)
	if len(skipped) > 0 {
		// Records left out must not meet the numbers this store hands
		// out next: the segments go aside, kept for whoever looks.
		aside := fmt.Sprintf(".unreplayed-%d", time.Now().Unix())
		for _, name := range JournalFiles(path) {
			if err := os.Rename(name, name+aside); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("move the journal %s aside: %w", name, err)
			}
		}
		for i := range skipped {
			skipped[i] += "; the journal's files are kept as " + filepath.Base(path) + "-journal-*" + aside
		}
	}
	j.Skipped = skipped
	m := &memtable{buckets: map[string]*layer{}, seq: at, base: at}
	for _, r := range run {
		m = m.with(r.own, r.seq)
	}
	if len(run) > 0 {
		if err := db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, m.seq, m.buckets) }); err != nil {
			return nil, fmt.Errorf("replay the journal of %s: %w", path, err)
		}
		at = m.seq
	}
	j.seq = at
	j.mem.Store(&memtable{buckets: map[string]*layer{}, seq: at, base: at})
	j.otherFree = true
	return j, nil
}

// checkpointInto writes layers, older first, into the file's transaction,
// with the number of the last record they hold.
func checkpointInto(tx *bolt.Tx, seq uint64, layers ...map[string]*layer) error {
	for _, l := range layers {
		if err := applyTo(tx, l); err != nil {
			return err
		}
	}
	b, err := tx.CreateBucketIfNotExists([]byte(journalBucket))
	if err != nil {
		return err
	}
	return b.Put(keyJournalSeq, binary.BigEndian.AppendUint64(nil, seq))
}

// journalState is what the file says of its journal: the store's journal
// id (found: one was made) and the last record a checkpoint wrote.
func journalState(db *bolt.DB) (id [16]byte, found bool, at uint64) {
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(journalBucket)); b != nil {
			if v := b.Get(keyJournalID); len(v) == len(id) {
				found = copy(id[:], v) == len(id)
			}
		}
		at = fileSeq(tx)
		return nil
	})
	return id, found, at
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
	names, size := recordSize(t.own)
	if size > directRecord {
		return j.direct(t.own, seq)
	}
	rec := encodeNamed(seq, t.own, names, size)
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
	j.pending += int64(len(rec))
	if j.running() && j.pending >= j.CheckpointBytes {
		// Writers outpace the checkpoint (an import): they wait for it
		// rather than grow the memtable without bound.
		j.waitCheckpoint()
	}
	j.maybeCheckpoint()
	return nil
}

// append writes rec to the segment in use, opening the segments first.
func (j *Journaled) append(rec []byte, seq uint64) error {
	if !j.idInFile {
		if _, err := rand.Read(j.id[:]); err != nil {
			return err
		}
		if err := j.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(journalBucket))
			if err != nil {
				return err
			}
			return b.Put(keyJournalID, j.id[:])
		}); err != nil {
			return err
		}
		j.idInFile = true
	}
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
	m := j.mem.Load()
	if err := j.db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, seq, m.buckets, own) }); err != nil {
		return err
	}
	j.inFile(seq)
	return nil
}

// UpdateFile runs fn in a transaction of the file itself, after writing
// every journaled commit into it in the same transaction: for a
// transaction of many changes (an import's batch), which on the journal's
// path would hold them twice in memory and gain nothing. It takes the
// next record number without a record, so that a snapshot taken across
// it sees the file changed (begin).
func (j *Journaled) UpdateFile(fn func(tx Tx) error) error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if j.closed {
		return errClosed
	}
	j.waitCheckpoint()
	m := j.mem.Load()
	seq := j.seq + 1
	if err := j.db.Update(func(tx *bolt.Tx) error {
		if err := checkpointInto(tx, seq, m.buckets); err != nil {
			return err
		}
		return fn(Bolt(tx))
	}); err != nil {
		return err
	}
	j.inFile(seq)
	return nil
}

// inFile records that the file holds every commit up to seq, the last:
// the memtable empties and both segments are free; writeMu is held.
func (j *Journaled) inFile(seq uint64) {
	j.checkpoints.Add(1)
	j.seq, j.pending = seq, 0
	j.memMu.Lock()
	j.mem.Store(&memtable{buckets: map[string]*layer{}, seq: seq, base: seq})
	j.memMu.Unlock()
	j.otherFree = true
	if j.segs[0] != nil {
		// A fresh use: the records in the current one are all in the file.
		_ = j.segs[j.cur].begin(j.id, seq)
	}
}

// maybeCheckpoint starts a checkpoint when the policy says so, and arms
// the quiet one; writeMu is held.
func (j *Journaled) maybeCheckpoint() {
	m := j.mem.Load()
	due := int(m.seq-m.base) >= j.CheckpointRecords || j.pending >= j.CheckpointBytes
	if due && !j.running() {
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
	if m := j.mem.Load(); !j.closed && !j.running() && m.seq > m.base {
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
	j.pending = 0
	j.ckpt = &ckptRun{done: make(chan struct{})}
	go j.checkpoint(m, j.ckpt)
}

// ckptRun is one background checkpoint: err is set before done closes.
// It takes no lock the writers hold, so a writer may wait for it.
type ckptRun struct {
	done chan struct{}
	err  error
}

// checkpoint writes m into the file, then retires what it wrote from the
// memtable.
func (j *Journaled) checkpoint(m *memtable, run *ckptRun) {
	run.err = j.db.Update(func(tx *bolt.Tx) error { return checkpointInto(tx, m.seq, m.buckets) })
	if run.err == nil {
		j.memMu.Lock()
		j.mem.Store(j.mem.Load().retire(m.seq))
		j.memMu.Unlock()
		j.checkpoints.Add(1)
	}
	close(run.done)
}

// running reports whether a checkpoint is running, taking in one that
// ended; writeMu is held.
func (j *Journaled) running() bool {
	if j.ckpt == nil {
		return false
	}
	select {
	case <-j.ckpt.done:
		j.takeIn()
		return false
	default:
		return true
	}
}

// takeIn records the ended checkpoint's outcome. On success the segment
// not in use is free: it holds records up to the checkpoint's at most
// (those of the use the writers left, or of one an earlier checkpoint
// that failed left behind, which this one wrote too).
func (j *Journaled) takeIn() {
	j.ckptErr = j.ckpt.err
	if j.ckpt.err == nil {
		j.otherFree = true
	}
	j.ckpt = nil
}

// waitCheckpoint waits for the running checkpoint, if any, holding
// writeMu: no commit lands meanwhile.
func (j *Journaled) waitCheckpoint() {
	if j.ckpt != nil {
		<-j.ckpt.done
		j.takeIn()
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
	j.running()
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
	if j.ckptErr == nil {
		// Every record is in the file: the next open need not read them.
		for _, sg := range j.segs {
			if sg != nil {
				sg.end()
			}
		}
	}
	j.closeSegments()
	return j.ckptErr
}

// Pending reports whether the journal beside the file at path holds
// records the file lacks, read from the file's own state in db (opened
// read-only): a store a crash left so must be opened for writing once,
// which replays them, before the file alone is copied or checked.
func Pending(db *bolt.DB, path string) (bool, error) {
	id, _, at := journalState(db)
	uses, err := readSegments(path, at)
	if err != nil || len(uses) == 0 {
		return false, err
	}
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
