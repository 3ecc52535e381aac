package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/internal/datadir"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
)

// A data dir inside a git work tree must stay out of git: it holds the
// private audit signing key and the stores (docs/decisions.md D41). cairn
// git-ignores the folders it creates; `cairn init` and `cairn status` say
// when git tracks a file there anyway.

// gitTimeout bounds one git command: a warning is not worth a hung command.
const gitTimeout = 10 * time.Second

// git runs git in dir and returns its stdout and exit status; the status
// is -1 when git is missing or did not finish.
func git(dir string, args ...string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return string(out), exit.ExitCode()
	}
	return "", -1
}

// trackedInDataDir lists the files of the data dir that git tracks in the
// work tree of the root, relative to the root, the signing key first; none
// outside git or without git.
func trackedInDataDir(s config.Settings) []string {
	if s.TempDataDir {
		return nil
	}
	// Outside a work tree, or with the data dir outside it, git fails.
	out, status := git(s.Root, "ls-files", "-z", "--", s.DataDir)
	if status != 0 {
		return nil
	}
	key := filepath.Clean(bundle.KeyPath(s.DataDir, s.AuditKeyFile))
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			continue
		}
		if filepath.Join(s.Root, f) == key {
			files = append([]string{f}, files...)
			continue
		}
		files = append(files, f)
	}
	return files
}

// warnTracked prints one line naming the data dir's files git tracks, if
// any.
func warnTracked(w io.Writer, s config.Settings) {
	files := trackedInDataDir(s)
	if len(files) == 0 {
		return
	}
	rel, err := filepath.Rel(s.Root, s.DataDir)
	if err != nil {
		rel = s.DataDir
	}
	shown := files
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(files)-5)
	}
	fmt.Fprintf(w, "cairn: warning: git tracks %s%s in the data dir, which holds the private audit signing key and the stores: run `git rm -r --cached %s` and commit\n",
		strings.Join(shown, ", "), more, rel)
}

// ignoreDataDir makes git ignore an existing data dir in a work tree that
// does not ignore it yet (one made before cairn wrote .gitignore files):
// the data dir gets its own .gitignore holding "*".
func ignoreDataDir(s config.Settings) error {
	if s.TempDataDir {
		return nil
	}
	// check-ignore exits 0 for an ignored path, 1 for one it would
	// track, and 128 outside a work tree.
	if _, status := git(s.Root, "check-ignore", "-q", "--", s.DataDir); status != 1 {
		return nil
	}
	return datadir.WriteIgnore(s.DataDir)
}
