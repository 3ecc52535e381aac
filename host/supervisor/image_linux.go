package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// image is a plugin executable held as the very bytes whose sha256 was
// checked: a sealed memfd, which nobody can change, executed at every start
// and restart of the plugin (docs/decisions.md D36). A binary swapped on
// disk after the check never runs — not at the next crash restart, not
// ever: a reload sees the new file, and the trust gate decides again.
type image struct {
	f   *os.File
	sum string
}

// imageFD is where the image sits in the plugin process while it execs
// itself (exec.Cmd.ExtraFiles[0]); scripts read themselves from there too.
const imageFD = 3

// execPath is the path that executes the image in the child.
func (im *image) execPath() string { return fmt.Sprintf("/proc/self/fd/%d", imageFD) }

// loadImage copies path into a sealed memfd, hashing the bytes on the way,
// and keeps it only when their sha256 is want.
func loadImage(name, path, want string) (*image, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: read %s to check its sha256: %w", name, path, err)
	}
	defer src.Close()
	fd, err := unix.MemfdCreate("cairn-plugin-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: memfd_create: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), "cairn-plugin-"+name+" (sealed image)")
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), src); err != nil {
		f.Close()
		return nil, fmt.Errorf("plugin %s: copy %s: %w", name, path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != want {
		f.Close()
		return nil, fmt.Errorf("plugin %s: %s has sha256 %s, not the trusted or pinned %s; refusing to start it (trust the new binary, or update the pin, if it is intended)", name, path, sum, want)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("plugin %s: seal its image: %w", name, err)
	}
	return &image{f: f, sum: sum}, nil
}

func (im *image) close() {
	if im != nil {
		_ = im.f.Close()
	}
}
