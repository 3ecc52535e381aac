package e2e

import (
	bolt "go.etcd.io/bbolt"

	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// boltPages reads a bbolt file's page headers the way bbolt lays them out
// (go.etcd.io/bbolt internal/common: a 16-byte page header — id u64, flags
// u16, count u16, overflow u32 — then, on a meta page, magic, version,
// page size, flags, the root bucket (root pgid, sequence), the freelist
// pgid, the high-water mark and the txid; leaf elements are flags, pos,
// ksize, vsize (u32 each), branch elements pos, ksize (u32) and a child
// pgid (u64)). It returns the page size, the newer meta page, the
// freelist page, the high-water mark, and a branch and a leaf page in
// use (found by walking the tree from the root bucket).
type boltLayout struct {
	pageSize            int
	meta, freelist, hwm uint64
	branch, leaf        uint64
	rootLeaf            uint64
	metaTxid            [2]uint64
}

func readBoltLayout(t *testing.T, path string) boltLayout {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ne := binary.NativeEndian
	read := func(off int64, n int) []byte {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return b
	}
	m0 := read(0, 96)
	ps := int(ne.Uint32(m0[24:]))
	m1 := read(int64(ps), 96)
	var l boltLayout
	l.pageSize = ps
	l.metaTxid = [2]uint64{ne.Uint64(m0[64:]), ne.Uint64(m1[64:])}
	m := m0
	if l.metaTxid[1] > l.metaTxid[0] {
		m, l.meta = m1, 1
	}
	root := ne.Uint64(m[32:])
	l.freelist, l.hwm = ne.Uint64(m[48:]), ne.Uint64(m[56:])
	var walk func(id uint64, depth int)
	walk = func(id uint64, depth int) {
		hdr := read(int64(id)*int64(ps), 16)
		flags, count, over := ne.Uint16(hdr[8:]), int(ne.Uint16(hdr[10:])), int(ne.Uint32(hdr[12:]))
		page := read(int64(id)*int64(ps), (over+1)*ps)
		switch flags {
		case 0x01: // branch
			if l.branch == 0 {
				l.branch = id
			}
			for i := 0; i < count; i++ {
				walk(ne.Uint64(page[16+16*i+8:]), depth+1)
			}
		case 0x02: // leaf
			if depth == 0 {
				l.rootLeaf = id
			} else if l.leaf == 0 {
				l.leaf = id
			}
			for i := 0; i < count; i++ {
				e := page[16+16*i:]
				if ne.Uint32(e)&1 == 0 { // not a bucket
					continue
				}
				at := 16 + 16*i + int(ne.Uint32(e[4:])) + int(ne.Uint32(e[8:]))
				if child := ne.Uint64(page[at:]); child != 0 {
					walk(child, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	if l.branch == 0 || l.leaf == 0 || l.freelist == 0 || l.freelist >= l.hwm {
		t.Fatalf("%s: no branch, leaf or freelist page found: %+v", path, l)
	}
	return l
}

// poke writes b at offset off of page id of the file.
func poke(t *testing.T, path string, ps int, id uint64, off int, b ...byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(id)*int64(ps)+int64(off)); err != nil {
		t.Fatal(err)
	}
}

// initLine is an MCP initialize request, one line.
const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}` + "\n"

// A damaged core.db — each page type of a copy corrupted in turn, and a
// truncated file — is named by `cairn store check` (exit 1: file, page,
// damage) and by `cairn serve` through the shared daemon: one line with
// the file, the damage and the commands to run, never a panic trace or
// "EOF". A damaged meta page bbolt falls back from lets the server start,
// and every session is told.
func TestCorruptStoreNamedByCheckAndServe(t *testing.T) {
	if suiteOnPostgres {
		t.Skip("bbolt files only")
	}
	// A store with a bucket spanning many pages (a branch page above its
	// leaves) and free pages.
	src := newWorkspace(t)
	s := src.serve("CAIRN_PROJECT=web", "CAIRN_LOG_LEVEL=warn")
	long := strings.Repeat("a description long enough to fill pages ", 30)
	for i := 0; i < 120; i++ {
		okCall(t, s, "task_create", map[string]any{"title": fmt.Sprintf("task %d", i), "description": long, "project": "web"})
	}
	s.close()
	// cairn does not write the freelist (it is rebuilt on open); a commit
	// by bbolt's defaults writes one, as stores from before that carry.
	db, err := bolt.Open(filepath.Join(src.dataDir(), "core.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		return meta.Put([]byte("user_version"), append([]byte(nil), meta.Get([]byte("user_version"))...))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	pristine, err := os.ReadFile(filepath.Join(src.dataDir(), "core.db"))
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		corrupt func(t *testing.T, path string, l boltLayout) uint64 // the page named
		want    []string
		starts  bool
	}{
		{"leaf", func(t *testing.T, path string, l boltLayout) uint64 {
			poke(t, path, l.pageSize, l.leaf, 16+4, 0xff, 0xff, 0, 0) // element 0's key offset
			return l.leaf
		}, []string{"(leaf)", "run past the page"}, false},
		{"branch", func(t *testing.T, path string, l boltLayout) uint64 {
			poke(t, path, l.pageSize, l.branch, 8, 0x40, 0) // flags
			return l.branch
		}, []string{"branch or leaf page"}, false},
		{"freelist", func(t *testing.T, path string, l boltLayout) uint64 {
			poke(t, path, l.pageSize, l.freelist, 8, 0x02, 0) // flags: a leaf
			return l.freelist
		}, []string{"(freelist)", "has type leaf"}, false},
		{"both meta pages", func(t *testing.T, path string, l boltLayout) uint64 {
			poke(t, path, l.pageSize, 0, 16, 1, 2, 3, 4) // magic
			poke(t, path, l.pageSize, 1, 16, 1, 2, 3, 4)
			return 0
		}, []string{"both meta pages are invalid"}, false},
		{"truncated", func(t *testing.T, path string, l boltLayout) uint64 {
			if err := os.Truncate(path, int64(l.hwm-3)*int64(l.pageSize)); err != nil {
				t.Fatal(err)
			}
			return l.hwm - 3
		}, []string{"truncated", "are missing"}, false},
		{"newer meta page", func(t *testing.T, path string, l boltLayout) uint64 {
			poke(t, path, l.pageSize, l.meta, 16+48, 0xde, 0xad) // txid: checksum fails
			return l.meta
		}, []string{"(meta)", "fails its checksum", "falls back"}, true},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			w := newWorkspace(t)
			path := filepath.Join(w.dataDir(), "core.db")
			if err := os.MkdirAll(w.dataDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, pristine, 0o600); err != nil {
				t.Fatal(err)
			}
			page := c.corrupt(t, path, readBoltLayout(t, path))
			named := fmt.Sprintf("page %d", page)

			code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "store", "check")
			if code != 1 {
				t.Fatalf("store check exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, want := range append([]string{path, named}, c.want...) {
				if !strings.Contains(out, want) {
					t.Errorf("store check does not say %q:\n%s", want, out)
				}
			}

			env := []string{"CAIRN_DAEMON=on", "CAIRN_LOG_LEVEL=error", "CAIRN_PROJECT=web"}
			if c.starts {
				s := w.serve(env...)
				if got := okCall(t, s, "task_list", map[string]any{"project": "web"}); got["total_count"] == nil {
					t.Fatalf("task_list: %v", got)
				}
				// The daemon's warning reaches the relay's stderr apart
				// from the answers, maybe after them.
				stderrSays(t, s.stderr, "the session's stderr", append([]string{path, named, "cairn store check"}, c.want...)...)
				return
			}
			code, _, errOut = runCairn(t, w, initLine, env, "serve")
			if code == 0 {
				t.Fatalf("serve started on a damaged store\nstderr:\n%s", errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if len(lines) != 1 {
				t.Errorf("serve wrote %d lines, want one:\n%s", len(lines), errOut)
			}
			for _, bad := range []string{"panic", "goroutine", "EOF", "SIGBUS"} {
				if strings.Contains(errOut, bad) {
					t.Errorf("serve's error says %q:\n%s", bad, errOut)
				}
			}
			for _, want := range append([]string{"ERR_INIT_FAILED", path, named, "cairn store check", "cairn restore"}, c.want...) {
				if !strings.Contains(errOut, want) {
					t.Errorf("serve's error does not say %q:\n%s", want, errOut)
				}
			}
		})
	}
}
