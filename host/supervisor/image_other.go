//go:build !linux

package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// image is a plugin executable held as the very bytes whose sha256 was
// checked (docs/decisions.md D36). Without Linux's sealed memfd, the bytes
// are copied into a private directory (mode 0700, the file 0500) and run
// from there at every start and restart: a binary swapped at the plugin's
// path after the check never runs. Only the host's own user could change
// the copy, and that user can change the host itself.
type image struct {
	f   *os.File
	dir string
	sum string
}

// execPath is the path that executes the image in the child.
func (im *image) execPath() string { return im.f.Name() }

// loadImage copies path into a private file, hashing the bytes on the way,
// and keeps it only when their sha256 is want.
func loadImage(name, path, want string) (*image, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: read %s to check its sha256: %w", name, path, err)
	}
	defer src.Close()
	dir, err := os.MkdirTemp("", "cairn-plugin-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("plugin %s: make a private directory for its image: %w", name, err)
	}
	dst := filepath.Join(dir, filepath.Base(path))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: create its image: %w", name, err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: copy %s: %w", name, path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != want {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: %s has sha256 %s, not the trusted or pinned %s; refusing to start it (trust the new binary, or update the pin, if it is intended)", name, path, sum, want)
	}
	if err := os.Chmod(dst, 0o500); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: seal its image: %w", name, err)
	}
	f, err := os.Open(dst)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: open its image: %w", name, err)
	}
	return &image{f: f, dir: dir, sum: sum}, nil
}

func (im *image) close() {
	if im != nil {
		_ = im.f.Close()
		_ = os.RemoveAll(im.dir)
	}
}
