package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/sys/unix"
)

// The journal of a journaled store (docs/decisions.md D47): two segment
// files beside the store's file, path-journal-0 and path-journal-1, used in
// turn. Writers append records to one while a checkpoint writes the
// records of the other into the file; once that checkpoint is durable the
// other segment is free again, and is written over from its start rather
// than replaced, since overwriting blocks the file system already holds
// makes an fdatasync a data write alone.
//
// A segment starts with a header: the magic, the store's journal id (so a
// segment is never replayed into another store's file) and the checkpoint
// the file had when this use of the segment began. Records follow, each
// one committed transaction:
//
//	length of the payload (4 bytes) | CRC-32C of seq and payload (4) |
//	seq (8) | payload
//	payload: per bucket 'B' name, an optional 'C' (cleared), and its
//	changes, 'P' key value or 'D' key, each length-prefixed with a uvarint.
//
// A replay reads a record's frame alone when its number shows the file
// already holds it.
//
// Records of a segment's use have consecutive numbers; what follows the
// last of them (a torn record, or an earlier use's records, all with lower
// numbers) ends the segment's replay.

const (
	journalMagic = "cairnjl1"
	headerSize   = 8 + 16 + 8
	frameSize    = 4 + 4 + 8
	// segmentSize is the size a new segment is written to with zeros, so
	// that appends overwrite blocks the file system already allocated.
	segmentSize = 1 << 20
	// maxRecord bounds a record a replay accepts; a transaction whose
	// record would be larger writes straight into the file instead.
	maxRecord = 64 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// segmentPath is segment i's file.
func segmentPath(path string, i int) string { return fmt.Sprintf("%s-journal-%d", path, i) }

// JournalFiles are the journal segment files a store at path may have.
func JournalFiles(path string) []string {
	return []string{segmentPath(path, 0), segmentPath(path, 1)}
}

// recordSize bounds the size of own's record, and lists the buckets it
// changes in order.
func recordSize(own map[string]*layer) (names []string, size int) {
	size = frameSize
	for name, l := range own {
		if l.tree.Len() == 0 && !l.cleared {
			continue
		}
		names = append(names, name)
		size += 2 + binary.MaxVarintLen64 + len(name)
		l.tree.Ascend(func(e entry) bool {
			size += 1 + 2*binary.MaxVarintLen64 + len(e.key) + len(e.value)
			return true
		})
	}
	sort.Strings(names)
	return names, size
}

// encodeRecord is the framed record of a transaction's changes.
func encodeRecord(seq uint64, own map[string]*layer) []byte {
	names, size := recordSize(own)
	return encodeNamed(seq, own, names, size)
}

func encodeNamed(seq uint64, own map[string]*layer, names []string, size int) []byte {
	buf := make([]byte, frameSize, size)
	binary.BigEndian.PutUint64(buf[8:16], seq)
	for _, name := range names {
		l := own[name]
		buf = append(buf, 'B')
		buf = appendBytes(buf, []byte(name))
		if l.cleared {
			buf = append(buf, 'C')
		}
		l.tree.Ascend(func(e entry) bool {
			if e.value == nil {
				buf = append(buf, 'D')
				buf = appendBytes(buf, e.key)
				return true
			}
			buf = append(buf, 'P')
			buf = appendBytes(buf, e.key)
			buf = appendBytes(buf, e.value)
			return true
		})
	}
	binary.LittleEndian.PutUint32(buf[0:4], uint32(len(buf)-frameSize))
	binary.LittleEndian.PutUint32(buf[4:8], crc32.Checksum(buf[8:], crcTable))
	return buf
}

func appendBytes(buf, p []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	return append(buf, p...)
}

// errRecord marks a payload that does not decode.
var errRecord = errors.New("journal record does not decode")

// decodeRecord parses a record's payload into its changes. Their keys and
// values are slices of payload.
func decodeRecord(payload []byte) (own map[string]*layer, err error) {
	r := payload
	own = map[string]*layer{}
	var cur *layer
	take := func() ([]byte, bool) {
		l, n := binary.Uvarint(r)
		if n <= 0 || l > uint64(len(r)-n) {
			return nil, false
		}
		p := r[n : n+int(l) : n+int(l)]
		r = r[n+int(l):]
		return p, true
	}
	for len(r) > 0 {
		op := r[0]
		r = r[1:]
		switch op {
		case 'B':
			name, ok := take()
			if !ok || len(name) == 0 || own[string(name)] != nil {
				return nil, errRecord
			}
			cur = &layer{tree: newTree()}
			own[string(name)] = cur
		case 'C':
			if cur == nil || cur.cleared || cur.tree.Len() > 0 {
				return nil, errRecord
			}
			cur.cleared = true
		case 'P', 'D':
			if cur == nil {
				return nil, errRecord
			}
			k, ok := take()
			if !ok || len(k) == 0 || len(k) > maxKeySize {
				return nil, errRecord
			}
			e := entry{key: k}
			if op == 'P' {
				if e.value, ok = take(); !ok {
					return nil, errRecord
				}
				if e.value == nil {
					e.value = empty
				}
			}
			if _, dup := cur.tree.ReplaceOrInsert(e); dup {
				return nil, errRecord
			}
		default:
			return nil, errRecord
		}
	}
	return own, nil
}

// maxKeySize is bbolt's key limit, which a replayed key must respect.
const maxKeySize = 32768

// record is one journal record; own is nil for one not decoded, which
// the file already holds.
type record struct {
	seq uint64
	own map[string]*layer
}

// header is a segment's first bytes.
func header(id [16]byte, base uint64) []byte {
	h := make([]byte, headerSize)
	copy(h, journalMagic)
	copy(h[8:24], id[:])
	binary.BigEndian.PutUint64(h[24:], base)
	return h
}

// segmentUse is what a segment file holds: the checkpoint its current use
// began after, and the records of that use that read whole.
type segmentUse struct {
	id      [16]byte
	base    uint64
	records []record
}

// readSegment parses a segment file's current use; records numbered up
// to at are checked by their frame alone and not decoded. A file too short
// for a header, or without the magic, holds no use.
func readSegment(f io.ReaderAt, at uint64) (segmentUse, bool) {
	var u segmentUse
	h := make([]byte, headerSize)
	if _, err := f.ReadAt(h, 0); err != nil || !bytes.Equal(h[:8], []byte(journalMagic)) {
		return u, false
	}
	copy(u.id[:], h[8:24])
	u.base = binary.BigEndian.Uint64(h[24:headerSize])
	off := int64(headerSize)
	frame := make([]byte, frameSize)
	for {
		if _, err := f.ReadAt(frame, off); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(frame[0:4])
		seq := binary.BigEndian.Uint64(frame[8:16])
		if n > maxRecord {
			break
		}
		if k := len(u.records); k > 0 && seq != u.records[k-1].seq+1 {
			break // an earlier use's record: this use ended before it
		}
		if seq == 0 {
			break // zeros: nothing was written here, or Close ended the use
		}
		r := record{seq: seq}
		if seq > at {
			body := make([]byte, 8+int(n))
			if _, err := f.ReadAt(body, off+8); err != nil {
				break
			}
			if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(frame[4:8]) {
				break
			}
			own, err := decodeRecord(body[8:])
			if err != nil {
				break
			}
			r.own = own
		}
		u.records = append(u.records, r)
		off += frameSize + int64(n)
	}
	return u, true
}

// replayable is the run of records, from both segments, that follows the
// file's checkpoint at: those numbered at+1, at+2, … with no gap. A use
// that began after a checkpoint the file does not have (the file is older
// than the journal) is not applied; nor is one of another store.
func replayable(uses []segmentUse, id [16]byte, at uint64) (run []record, skipped []string) {
	byseq := map[uint64]record{}
	for i, u := range uses {
		switch {
		case u.id != id:
			skipped = append(skipped, fmt.Sprintf("segment %d belongs to another store", i))
			continue
		case u.base > at && len(u.records) > 0 && u.records[len(u.records)-1].seq > at:
			skipped = append(skipped, fmt.Sprintf("segment %d follows checkpoint %d, which the file (at %d) does not have", i, u.base, at))
			continue
		}
		for _, r := range u.records {
			if r.seq > at {
				byseq[r.seq] = r
			}
		}
	}
	for next := at + 1; ; next++ {
		r, ok := byseq[next]
		if !ok {
			break
		}
		run = append(run, r)
	}
	if len(run) < len(byseq) {
		var lost []uint64
		for s := range byseq {
			if s > at+uint64(len(run)) {
				lost = append(lost, s)
			}
		}
		slices.Sort(lost)
		skipped = append(skipped, fmt.Sprintf("records %d… do not follow the last replayed one (%d)", lost[0], at+uint64(len(run))))
	}
	return run, skipped
}

// segment is an open segment file.
type segment struct {
	f *os.File
	// off is where the next record goes; size what the file holds.
	off, size int64
	// last is the number of the last record of its current use (0: none).
	last uint64
}

// openSegment opens segment file name for writing, creating it filled
// with zeros to segmentSize.
func openSegment(name string) (*segment, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	s := &segment{f: f, size: st.Size()}
	if s.size < segmentSize {
		if _, err := f.WriteAt(make([]byte, segmentSize-s.size), s.size); err != nil {
			_ = f.Close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return nil, err
		}
		s.size = segmentSize
		if err := syncDir(filepath.Dir(name)); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return s, nil
}

// begin starts a new use of the segment, after checkpoint base: the header
// is written now and made durable with the use's first record.
func (s *segment) begin(id [16]byte, base uint64) error {
	if _, err := s.f.WriteAt(header(id, base), 0); err != nil {
		return err
	}
	s.off, s.last = headerSize, 0
	return nil
}

// append writes rec (record seq) and makes it durable.
func (s *segment) append(rec []byte, seq uint64) error {
	if _, err := s.f.WriteAt(rec, s.off); err != nil {
		return err
	}
	if err := unix.Fdatasync(int(s.f.Fd())); err != nil {
		return err
	}
	s.off += int64(len(rec))
	s.size = max(s.size, s.off)
	s.last = seq
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readSegments reads both segment files of path, decoding the records
// past at; a missing file is no use.
func readSegments(path string, at uint64) ([]segmentUse, error) {
	var uses []segmentUse
	for _, name := range JournalFiles(path) {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		u, ok := readSegment(f, at)
		_ = f.Close()
		if ok {
			uses = append(uses, u)
		}
	}
	return uses, nil
}

// end marks the segment's use as ended after its last record, so that the
// next open reads no further (Close): zeros where the next frame would go.
func (s *segment) end() {
	_, _ = s.f.WriteAt(make([]byte, frameSize), s.off)
}
