package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cairn-mcp/cairn/internal/buildid"
)

// AreasBinary is the name of the binary that holds only the built-in areas,
// built beside cairn by `make build` and the release (docs/decisions.md
// D46): it starts in about half the time of cairn, which also links the
// MCP server, the dashboard and their package initialisation, and a
// session's first tools/list waits for two areas to start.
const AreasBinary = "cairn-areas"

// areasBuildID is the Go build ID of the cairn-areas binary built with this
// cairn; the build sets it with -ldflags -X. Empty (a plain `go build` of
// cairn), built-in areas run from cairn itself.
var areasBuildID string

// areasPath is the binary built-in areas run from, chosen once.
func (f *Fleet) areasPath() string {
	f.areasOnce.Do(func() {
		path, why := areasExecutable(f.opts.Executable, areasBuildID)
		if f.log != nil {
			if why != "" {
				f.log.Debug("built-in areas run from cairn", "reason", why)
			} else {
				f.log.Debug("built-in areas run from "+AreasBinary, "path", path)
			}
		}
		f.areas = path
	})
	return f.areas
}

// areasExecutable picks the binary the built-in areas run from: cairn-areas
// in self's directory when it is the one built with self (its build ID is
// want), an executable regular file owned by self's owner that no one else
// may write, in a folder not every user may write (unless it is sticky);
// otherwise self, with the reason.
func areasExecutable(self, want string) (path, why string) {
	if want == "" {
		return self, "this cairn was built without " + AreasBinary
	}
	// cairn started through a link (a PATH entry pointing into an unpacked
	// release) looks beside the file the link names.
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	dir := filepath.Dir(self)
	cand := filepath.Join(dir, AreasBinary)
	// In a folder every user may write, anyone could swap the file between
	// this check and its start, unless the folder is sticky (as /tmp is:
	// no one may rename or remove another's file). A folder its group may
	// write is a shared install (an admin group's) whose members could
	// replace cairn itself as well.
	if di, err := os.Stat(dir); err != nil {
		return self, err.Error()
	} else if di.Mode().Perm()&0o002 != 0 && di.Mode()&os.ModeSticky == 0 {
		return self, fmt.Sprintf("%s may be written by every user (mode %v)", dir, di.Mode().Perm())
	}
	fi, err := os.Lstat(cand)
	if err != nil {
		return self, err.Error()
	}
	if !fi.Mode().IsRegular() {
		return self, cand + " is not a regular file"
	}
	if fi.Mode().Perm()&0o100 == 0 {
		return self, cand + " is not executable"
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return self, fmt.Sprintf("%s may be written by others (mode %v)", cand, fi.Mode().Perm())
	}
	sfi, err := os.Stat(self)
	if err != nil {
		return self, err.Error()
	}
	o, ok := owner(fi)
	so, sok := owner(sfi)
	if !ok || !sok || o != so {
		return self, cand + " has another owner than cairn"
	}
	got, err := buildid.Read(cand)
	if err != nil {
		return self, err.Error()
	}
	if got != want {
		return self, fmt.Sprintf("%s is from another build (build ID %s, this cairn's is %s)", cand, got, want)
	}
	return cand, ""
}

// owner is the user that owns the file fi describes.
func owner(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
