package fleet

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchSettle is how long the config file and the plugin dir must be quiet
// before a reload: a plugin binary being copied in is written in many steps.
const watchSettle = 250 * time.Millisecond

// WatchConfig reloads the host when its config file, its plugin dir or
// the operator's trust store changes (D21: what belongs to the data dir is the server's, and a change
// is picked up without a manual SIGHUP). It returns a function that stops
// watching.
func (f *Fleet) WatchConfig(ctx context.Context) (stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		f.log.Warn("cannot watch the config file and plugin dir; send SIGHUP to reload", "error", err)
		return func() {}
	}
	cfgFile := ""
	if f.cfg.ConfigFile != "" {
		cfgFile, _ = filepath.Abs(f.cfg.ConfigFile)
	}
	pluginDir, _ := filepath.Abs(f.cfg.PluginDir)
	// `cairn plugins trust` takes effect at once: the trust store is the
	// operator's, but what it admits is this server's plugin set.
	trustFile := ""
	if p, err := f.cfg.TrustStorePath(); err == nil && p != "" {
		trustFile, _ = filepath.Abs(p)
	}
	// Watch the directories, not the files: editors and copies replace
	// files, and either may not exist yet.
	watched := map[string]bool{}
	add := func(dir string) {
		if dir == "" || watched[dir] {
			return
		}
		if err := w.Add(dir); err == nil {
			watched[dir] = true
		}
	}
	if cfgFile != "" {
		add(filepath.Dir(cfgFile))
	}
	add(pluginDir)
	add(filepath.Dir(pluginDir)) // to see the plugin dir appear
	if trustFile != "" {
		add(filepath.Dir(trustFile))
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer w.Close()
		var timer *time.Timer
		fire := make(chan struct{}, 1)
		for {
			select {
			case <-ctx.Done():
				if timer != nil {
					timer.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				name, _ := filepath.Abs(ev.Name)
				relevant := name == cfgFile || filepath.Dir(name) == pluginDir || name == pluginDir || (trustFile != "" && name == trustFile)
				if name == pluginDir && ev.Has(fsnotify.Create) {
					add(pluginDir)
				}
				if !relevant {
					continue
				}
				if timer != nil {
					timer.Stop()
				}
				timer = time.AfterFunc(watchSettle, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			case <-fire:
				f.log.Info("config file or plugin dir changed; reloading")
				_ = f.Reload(ctx)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				f.log.Debug("watch error", "error", err)
			}
		}
	}()
	return cancel
}
