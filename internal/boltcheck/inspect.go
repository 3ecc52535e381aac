// Package boltcheck checks, opens and copies the bbolt files the areas keep
// their state in (docs/decisions.md D26), so that a damaged file is named
// (file, page, bucket, damage) instead of crashing the process that opens
// it: bbolt reads its pages through a memory map and trusts them, so a
// truncated file faults and a corrupt page panics.
//
// Inspect walks a file with plain reads, never through a memory map, so
// it cannot fault: the two meta pages, the size the newest valid one
// promises, the freelist page and every branch and leaf page reachable
// from the root bucket, with the bounds of every element. Only a file that
// passed it is handed to bbolt (Open, CheckFile), whose own Tx.Check then
// finds what needs the whole picture (pages both used and free,
// unreachable pages).
//
// The layout read here is bbolt's on-disk format (go.etcd.io/bbolt
// internal/common: page.go, meta.go, bucket.go), in the machine's byte
// order as bbolt writes it.
package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"unicode/utf8"
)

// bbolt's on-disk constants (internal/common/page.go, types.go).
const (
	pageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	elemSize       = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	inBucketSize   = 16 // root pgid u64, sequence u64

	branchFlag   = 0x01
	leafFlag     = 0x02
	metaFlag     = 0x04
	freelistFlag = 0x10

	bucketLeafFlag = 0x01

	magic         = 0xED0CDAED
	formatVersion = 2
	noFreelist    = ^uint64(0)

	// meta fields, as offsets from the start of the page.
	metaMagic    = pageHeaderSize + 0
	metaVersion  = pageHeaderSize + 4
	metaPageSize = pageHeaderSize + 8
	metaRoot     = pageHeaderSize + 16
	metaFreelist = pageHeaderSize + 32
	metaPgid     = pageHeaderSize + 40
	metaTxid     = pageHeaderSize + 48
	metaChecksum = pageHeaderSize + 56
)

// ne is the byte order bbolt writes its structs in: the machine's own.
var ne = binary.NativeEndian

// Problem is one thing wrong in a store, named well enough to act on.
type Problem struct {
	// Area is the area owning the store (core, admin, sdd).
	Area string `json:"area,omitempty"`
	// File is the store's file (or, on PostgreSQL, its location).
	File string `json:"file"`
	// Page is the bbolt page at fault, when one is.
	Page *uint64 `json:"page,omitempty"`
	// PageType is that page's role: meta, freelist, branch, leaf.
	PageType string `json:"page_type,omitempty"`
	// Bucket is the bucket at fault (nested buckets joined with "/").
	Bucket string `json:"bucket,omitempty"`
	// Record names the record at fault (a task, a chain link, a session).
	Record string `json:"record,omitempty"`
	// Damage says what is wrong.
	Damage string `json:"damage"`
	// Fatal is true when the store cannot be opened safely as it is.
	Fatal bool `json:"fatal,omitempty"`
}

// String is the problem on one line.
func (p Problem) String() string {
	var b bytes.Buffer
	b.WriteString(p.File)
	if p.Page != nil {
		fmt.Fprintf(&b, " page %d", *p.Page)
		if p.PageType != "" {
			fmt.Fprintf(&b, " (%s)", p.PageType)
		}
	}
	if p.Bucket != "" {
		fmt.Fprintf(&b, " bucket %q", p.Bucket)
	}
	if p.Record != "" {
		fmt.Fprintf(&b, " record %s", p.Record)
	}
	b.WriteString(": ")
	b.WriteString(p.Damage)
	return b.String()
}

// Layout is what Inspect learned of a sound file.
type Layout struct {
	PageSize int    `json:"page_size"`
	Pages    uint64 `json:"pages"` // the high-water mark: pages in use or free
	TxID     uint64 `json:"txid"`
	// Meta is the meta page bbolt will use (0 or 1).
	Meta int `json:"meta_page"`
	// Reached counts the branch and leaf pages walked.
	Reached int `json:"pages_walked"`
}

// Inspect reads the bbolt file at path page by page and reports every
// damage it finds. It never maps the file, so a damaged file cannot crash
// it. A problem marked Fatal means bbolt must not be given the file.
func Inspect(path string) (Layout, []Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return Layout{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Layout{}, nil, err
	}
	in := &inspector{f: f, size: fi.Size(), file: path}
	in.run()
	return in.lay, in.problems, nil
}

// Fatal returns the fatal problems among ps.
func Fatal(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Fatal {
			out = append(out, p)
		}
	}
	return out
}

type inspector struct {
	f    io.ReaderAt
	size int64
	file string
	lay  Layout
	hwm  uint64
	// seen has a bit per page below hwm: a 100,000-task core store has
	// some 120,000 pages, each a map entry before.
	seen     []uint64
	problems []Problem
	// bufs holds one page buffer per tree depth: a page's bytes are
	// needed only until its subtree is walked, so the walk reuses them
	// instead of allocating a page per page.
	bufs [][]byte
}

func pgid(id uint64) *uint64 { return &id }

func (in *inspector) fail(page *uint64, typ, bucket, format string, args ...any) {
	in.problems = append(in.problems, Problem{File: in.file, Page: page, PageType: typ, Bucket: bucket, Damage: fmt.Sprintf(format, args...), Fatal: true})
}

func (in *inspector) warn(page *uint64, typ, format string, args ...any) {
	in.problems = append(in.problems, Problem{File: in.file, Page: page, PageType: typ, Damage: fmt.Sprintf(format, args...)})
}

// meta is a decoded meta page.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// readMeta decodes the meta page id of a file with pages of size ps, or
// says why it is not valid.
func (in *inspector) readMeta(id uint64, ps int) (meta, error) {
	buf := make([]byte, metaChecksum+8)
	if _, err := in.f.ReadAt(buf, int64(id)*int64(ps)); err != nil {
		return meta{}, fmt.Errorf("cannot be read (%v)", err)
	}
	switch {
	case ne.Uint16(buf[8:]) != metaFlag:
		return meta{}, fmt.Errorf("is not a meta page (flags %#x)", ne.Uint16(buf[8:]))
	case ne.Uint32(buf[metaMagic:]) != magic:
		return meta{}, errors.New("has no bbolt magic number")
	case ne.Uint32(buf[metaVersion:]) != formatVersion:
		return meta{}, fmt.Errorf("has format version %d, not %d", ne.Uint32(buf[metaVersion:]), formatVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(buf[pageHeaderSize:metaChecksum])
	if h.Sum64() != ne.Uint64(buf[metaChecksum:]) {
		return meta{}, errors.New("fails its checksum")
	}
	return meta{
		pageSize: ne.Uint32(buf[metaPageSize:]),
		root:     ne.Uint64(buf[metaRoot:]),
		freelist: ne.Uint64(buf[metaFreelist:]),
		pgid:     ne.Uint64(buf[metaPgid:]),
		txid:     ne.Uint64(buf[metaTxid:]),
	}, nil
}

func (in *inspector) run() {
	if in.size < 2*pageHeaderSize+metaChecksum {
		in.fail(nil, "", "", "the file is %d bytes, too short to hold bbolt's two meta pages (truncated or not a bbolt file)", in.size)
		return
	}
	// Meta page 0 says the page size; when it is damaged, meta page 1 is
	// looked for where each usual page size would put it, as bbolt does.
	m0, err0 := in.readMeta(0, 0)
	sizes := []int{}
	if err0 == nil {
		sizes = append(sizes, int(m0.pageSize))
	}
	sizes = append(sizes, os.Getpagesize(), 4096, 8192, 16384, 32768, 65536)
	var m1 meta
	err1 := errors.New("cannot be found")
	for _, ps := range sizes {
		if ps <= 0 || int64(2*ps) > in.size {
			continue
		}
		if m, err := in.readMeta(1, ps); err == nil && int(m.pageSize) == ps {
			m1, err1 = m, nil
			break
		} else if err0 == nil && ps == int(m0.pageSize) {
			err1 = err
		}
	}
	use, m := -1, meta{}
	switch {
	case err0 == nil && err1 == nil:
		if m1.txid > m0.txid {
			use, m = 1, m1
		} else {
			use, m = 0, m0
		}
	case err0 == nil:
		use, m = 0, m0
		in.warn(pgid(1), "meta", "meta page 1 %v; bbolt falls back to meta page 0 (transaction %d), so the last commit before the damage may be lost", err1, m0.txid)
	case err1 == nil:
		use, m = 1, m1
		in.warn(pgid(0), "meta", "meta page 0 %v; bbolt falls back to meta page 1 (transaction %d), so the last commit before the damage may be lost", err0, m1.txid)
	default:
		in.fail(pgid(0), "meta", "", "both meta pages are invalid (page 0 %v; page 1 %v): not a readable bbolt file", err0, err1)
		return
	}
	ps := int(m.pageSize)
	if ps < 1024 || ps > 1<<20 || ps&(ps-1) != 0 {
		in.fail(pgid(uint64(use)), "meta", "", "meta page %d gives the page size %d, which bbolt never writes", use, ps)
		return
	}
	in.lay = Layout{PageSize: ps, Pages: m.pgid, TxID: m.txid, Meta: use}
	in.hwm = m.pgid
	if want := int64(m.pgid) * int64(ps); in.size < want {
		in.fail(pgid(uint64(in.size/int64(ps))), "", "", "the file is truncated: %d bytes, but meta page %d (transaction %d) says it holds %d pages of %d bytes (%d bytes); pages from %d on are missing",
			in.size, use, m.txid, m.pgid, ps, want, in.size/int64(ps))
		return
	}
	if m.pgid < 3 {
		in.fail(pgid(uint64(use)), "meta", "", "meta page %d says the file holds %d pages, fewer than bbolt ever writes", use, m.pgid)
		return
	}
	if m.freelist != noFreelist {
		in.freelist(m.freelist)
	}
	in.walk(m.root, "", 0)
}

// page reads page id whole (with its overflow pages) into the buffer of
// depth, or reports why it cannot. One read takes the first page, header
// and all, and a second only the overflow pages, when the page has any:
// at open a 100,000-task core store's walk reads some 120,000 pages.
func (in *inspector) page(id uint64, typ, bucket string, depth int) []byte {
	if id < 2 || id >= in.hwm {
		in.fail(pgid(id), typ, bucket, "the page is referenced but lies outside the file's pages 2..%d", in.hwm-1)
		return nil
	}
	ps := in.lay.PageSize
	for len(in.bufs) <= depth {
		in.bufs = append(in.bufs, nil)
	}
	buf := in.bufs[depth]
	if cap(buf) < ps {
		buf = make([]byte, ps)
	}
	buf = buf[:ps]
	if _, err := in.f.ReadAt(buf, int64(id)*int64(ps)); err != nil {
		in.fail(pgid(id), typ, bucket, "cannot be read: %v", err)
		return nil
	}
	if got := ne.Uint64(buf); got != id {
		in.fail(pgid(id), typ, bucket, "the page header names page %d (flags %#x): the page was overwritten", got, ne.Uint16(buf[8:]))
		return nil
	}
	over := uint64(ne.Uint32(buf[12:]))
	if id+over >= in.hwm {
		in.fail(pgid(id), typ, bucket, "the page claims %d overflow pages, which run past the file's last page %d", over, in.hwm-1)
		return nil
	}
	if over > 0 {
		whole := make([]byte, (over+1)*uint64(ps))
		copy(whole, buf)
		if _, err := in.f.ReadAt(whole[ps:], int64(id+1)*int64(ps)); err != nil {
			in.fail(pgid(id), typ, bucket, "cannot be read: %v", err)
			return nil
		}
		buf = whole
	}
	in.bufs[depth] = buf
	return buf
}

// freelist checks the freelist page: its type, and that every page it
// frees lies inside the file.
func (in *inspector) freelist(id uint64) {
	buf := in.page(id, "freelist", "", 0)
	if buf == nil {
		return
	}
	if fl := ne.Uint16(buf[8:]); fl != freelistFlag {
		in.fail(pgid(id), "freelist", "", "the meta page points here for the freelist, but the page has type %s (flags %#x)", typeName(fl), fl)
		return
	}
	idx, n := 0, uint64(ne.Uint16(buf[10:]))
	if n == 0xFFFF {
		idx, n = 1, ne.Uint64(buf[pageHeaderSize:])
	}
	if room := uint64(len(buf)-pageHeaderSize) / 8; n > room || uint64(idx)+n > room {
		in.fail(pgid(id), "freelist", "", "the freelist says it holds %d page ids, more than its %d bytes can", n, len(buf))
		return
	}
	for i := uint64(0); i < n; i++ {
		free := ne.Uint64(buf[pageHeaderSize+8*(uint64(idx)+i):])
		if free < 2 || free >= in.hwm {
			in.fail(pgid(id), "freelist", "", "free page id %d (entry %d) lies outside the file's pages 2..%d", free, i, in.hwm-1)
			return
		}
	}
}

func typeName(flags uint16) string {
	switch flags {
	case branchFlag:
		return "branch"
	case leafFlag:
		return "leaf"
	case metaFlag:
		return "meta"
	case freelistFlag:
		return "freelist"
	}
	return "unknown"
}

// maxDepth bounds the walk: bbolt's trees are far shallower, so a deeper
// one loops.
const maxDepth = 64

// walk checks the tree rooted at page id, the pages of bucket.
func (in *inspector) walk(id uint64, bucket string, depth int) {
	if depth > maxDepth {
		in.fail(pgid(id), "", bucket, "the bucket's tree is deeper than %d pages: its pages form a loop", maxDepth)
		return
	}
	if id < in.hwm {
		if in.seen == nil {
			in.seen = make([]uint64, in.hwm/64+1)
		}
		if in.seen[id/64]&(1<<(id%64)) != 0 {
			in.fail(pgid(id), "", bucket, "the page is referenced twice in the tree")
			return
		}
		in.seen[id/64] |= 1 << (id % 64)
	}
	buf := in.page(id, "", bucket, depth)
	if buf == nil {
		return
	}
	in.lay.Reached++
	in.node(buf, pgid(id), bucket, depth)
}

// node checks one branch or leaf page (buf, whose id is id; nil for a
// bucket stored inline in its parent's value).
func (in *inspector) node(buf []byte, id *uint64, bucket string, depth int) {
	flags := ne.Uint16(buf[8:])
	typ := typeName(flags)
	if flags != branchFlag && flags != leafFlag {
		in.fail(id, typ, bucket, "a branch or leaf page of the bucket was expected, but the page has type %s (flags %#x)", typ, flags)
		return
	}
	count := int(ne.Uint16(buf[10:]))
	if pageHeaderSize+count*elemSize > len(buf) {
		in.fail(id, typ, bucket, "the page says it holds %d elements, more than its %d bytes can", count, len(buf))
		return
	}
	if count == 0 && flags == branchFlag {
		in.fail(id, typ, bucket, "the branch page is empty")
		return
	}
	var prev []byte
	for i := 0; i < count; i++ {
		at := pageHeaderSize + i*elemSize
		e := buf[at : at+elemSize]
		var pos, ksize, vsize uint64
		if flags == branchFlag {
			pos, ksize = uint64(ne.Uint32(e[0:])), uint64(ne.Uint32(e[4:]))
		} else {
			pos, ksize, vsize = uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
		}
		start := uint64(at) + pos
		if start+ksize+vsize > uint64(len(buf)) {
			in.fail(id, typ, bucket, "element %d's key and value (%d+%d bytes at offset %d) run past the page's %d bytes", i, ksize, vsize, start, len(buf))
			return
		}
		key := buf[start : start+ksize]
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			in.fail(id, typ, bucket, "element %d's key %s does not sort after the key before it, %s", i, showKey(key), showKey(prev))
			return
		}
		prev = key
		if flags == branchFlag {
			in.walk(ne.Uint64(e[8:]), bucket, depth+1)
			continue
		}
		if ne.Uint32(e[0:])&bucketLeafFlag == 0 {
			continue
		}
		value := buf[start+ksize : start+ksize+vsize]
		child := joinBucket(bucket, key)
		if len(value) < inBucketSize {
			in.fail(id, typ, bucket, "element %d (bucket %s) has a %d-byte bucket header, shorter than %d", i, showKey(key), len(value), inBucketSize)
			return
		}
		if root := ne.Uint64(value); root != 0 {
			in.walk(root, child, depth+1)
			continue
		}
		inline := value[inBucketSize:]
		if len(inline) < pageHeaderSize {
			in.fail(id, typ, child, "the bucket is stored inline but its page is %d bytes, shorter than a page header", len(inline))
			return
		}
		in.node(inline, nil, child, depth+1)
	}
}

func joinBucket(parent string, name []byte) string {
	if parent == "" {
		return showName(name)
	}
	return parent + "/" + showName(name)
}

func showName(b []byte) string {
	if utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 }) {
		return string(b)
	}
	return fmt.Sprintf("%x", b)
}

func showKey(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%x…", b[:32])
	}
	return fmt.Sprintf("%x", b)
}
