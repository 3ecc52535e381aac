package skills

import (
	"errors"

	"github.com/fsnotify/fsnotify"
)

// FailWatcher makes Open fall back to polling until the returned function
// restores the real watcher.
func FailWatcher() (restore func()) {
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, errors.New("too many open files") }
	return func() { newWatcher = fsnotify.NewWatcher }
}
