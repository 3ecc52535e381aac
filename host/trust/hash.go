package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// StatKey identifies one version of a file without reading it: a rewrite,
// a replacement (new inode) or a touch changes it. ctime is included because
// a writer can set mtime back but not ctime.
type StatKey struct {
	Dev, Ino, Size   uint64
	MtimeNs, CtimeNs int64
}

func (k StatKey) String() string {
	return fmt.Sprintf("%d:%d:%d:%d:%d", k.Dev, k.Ino, k.Size, k.MtimeNs, k.CtimeNs)
}

// Stat returns path's StatKey, following symlinks (what exec runs).
func Stat(path string) (StatKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return StatKey{}, err
	}
	return keyOf(fi), nil
}

func keyOf(fi os.FileInfo) StatKey {
	k := StatKey{Size: uint64(fi.Size()), MtimeNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.Dev, k.Ino = uint64(st.Dev), st.Ino
		k.CtimeNs = ctimeNs(st)
	}
	return k
}

type cached struct {
	key StatKey
	sum string
}

// hashes caches each path's sha256 by its StatKey, so starting N built-in
// areas from one 47 MB executable hashes it at most once, and only when a
// pin or a trust check needs the content.
var hashes = struct {
	sync.Mutex
	m map[string]cached
}{m: map[string]cached{}}

// SHA256 returns the hex sha256 of the file at path, from the cache when
// the file's StatKey has not changed since it was last hashed.
func SHA256(path string) (string, error) {
	before, err := Stat(path)
	if err != nil {
		return "", err
	}
	hashes.Lock()
	c, ok := hashes.m[path]
	hashes.Unlock()
	if ok && c.key == before {
		return c.sum, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	// Cache only when the file did not change while it was read: the
	// opened file and the path must both still have the key seen before.
	fi, ferr := f.Stat()
	if after, err := Stat(path); err == nil && ferr == nil && after == before && keyOf(fi) == before {
		hashes.Lock()
		hashes.m[path] = cached{key: before, sum: sum}
		hashes.Unlock()
	}
	return sum, nil
}
