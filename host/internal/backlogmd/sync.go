package backlogmd

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
)

// Sync makes the folder dir hold board: it writes each file whose bytes
// differ from what is there, atomically (a temporary file in the same
// folder, renamed over it), and removes the task files of the managed
// folders that board does not hold (a task that moved folder or was
// renamed). prev, when not nil, is the board the last Sync wrote: files
// whose bytes did not change since are not read again, and only its files
// are candidates for removal. Files other than cairn's own task files are
// never touched.
func Sync(dir string, board, prev Board) (written, removed int, err error) {
	var changed []string
	folders := map[string]bool{}
	for name, data := range board {
		if prev != nil {
			if old, ok := prev[name]; ok && bytes.Equal(old, data) {
				continue
			}
		}
		changed = append(changed, name)
		folders[path.Dir(name)] = true
	}
	for f := range folders {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(f)), 0o755); err != nil {
			return 0, 0, err
		}
	}
	if written, err = writeChanged(dir, board, changed); err != nil {
		return written, 0, err
	}
	stale, err := staleFiles(dir, board, prev)
	if err != nil {
		return written, removed, err
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, removed, err
		}
		removed++
	}
	return written, removed, nil
}

// syncWorkers write a board's files side by side: a first export of
// thousands of tasks waits on the file system, not on the processor.
const syncWorkers = 8

// writeChanged writes the named files of board whose bytes differ from
// the folder's, and says how many it wrote.
func writeChanged(dir string, board Board, names []string) (int, error) {
	var (
		mu      sync.Mutex
		written int
		first   error
		wg      sync.WaitGroup
	)
	next := make(chan string)
	for range min(syncWorkers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				data := board[name]
				p := filepath.Join(dir, filepath.FromSlash(name))
				if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, data) {
					continue
				}
				err := writeAtomic(p, data)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil {
					written++
				}
				mu.Unlock()
			}
		}()
	}
	for _, name := range names {
		next <- name
	}
	close(next)
	wg.Wait()
	return written, first
}

// staleFiles are the files to remove: those of prev that board lacks, or,
// on a first Sync, cairn's task files in the managed folders that board
// lacks.
func staleFiles(dir string, board, prev Board) ([]string, error) {
	var out []string
	if prev != nil {
		for name := range prev {
			if _, ok := board[name]; !ok {
				out = append(out, name)
			}
		}
		return out, nil
	}
	for sub, own := range ManagedDirs {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := path.Join(sub, e.Name())
			if _, ok := board[name]; !ok && e.Type().IsRegular() && own.MatchString(e.Name()) {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// writeAtomic replaces the file at p with data: readers see the old bytes
// or the new, never a part.
func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".cairn-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		// Files a team commits: readable like the files beside them.
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
