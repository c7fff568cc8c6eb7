package team

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// Defaults of the configuration watcher.
const (
	// configSettle is how long the files must be left alone before they
	// are read: an editor saving in place writes in several steps, one
	// that saves by renaming removes and creates the file.
	configSettle = 300 * time.Millisecond
	// configPoll is how often the files are looked at without an event,
	// in case the watcher missed one (a network share, the folder
	// replaced): their size and time, not their content.
	configPoll = 2 * time.Second
)

// watchConfig reloads the configuration when config/roles.yaml,
// config/settings.yaml or config/policy.yaml changes, until ctx ends. It watches the folder, not
// the files, so a file replaced by a rename (how most editors and
// atomicfile save) is seen like one written in place; a burst of events is
// one reload once the files have settled, and a reload happens only when a
// file's content differs from what was last applied or refused.
func (t *Team) watchConfig(ctx context.Context, settle, poll time.Duration) {
	l := workspace.New(t.Config().Workspace)
	dir := filepath.Dir(l.Path(workspace.RolesFile))
	names := map[string]bool{filepath.Base(config.RolesFile): true, filepath.Base(config.SettingsFile): true, filepath.Base(config.PolicyFile): true}

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err != nil {
		t.log.Warn().Err(err).Msg("configuration watcher unavailable; looking at the files every few seconds")
	} else {
		defer w.Close()
		if err := w.Add(dir); err != nil {
			t.log.Warn().Err(err).Str("path", dir).Msg("cannot watch the configuration folder; looking at the files every few seconds")
		}
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	// A first look once settled: a change made between Open and now has
	// no event and may already be in stamps.
	due := time.NewTimer(settle)
	defer due.Stop()
	stamps := statFiles(l)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if names[filepath.Base(ev.Name)] {
				due.Reset(settle)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			t.log.Debug().Err(err).Msg("configuration watcher")
			due.Reset(settle)
		case <-tick.C:
			if now := statFiles(l); now != stamps {
				stamps = now
				due.Reset(settle)
			}
		case <-due.C:
			stamps = statFiles(l)
			t.reloadIfChanged()
		}
	}
}

// reloadIfChanged reloads when a file's content differs from what was
// last applied or refused: touching a file, or the team's own edit being
// seen by the watcher, changes nothing.
func (t *Team) reloadIfChanged() {
	t.cfgMu.Lock()
	same := readVersions(t.live.cur.Workspace) == t.live.seen
	t.cfgMu.Unlock()
	if same {
		return
	}
	t.log.Info().Msg("configuration files changed; applying them")
	_, _ = t.Reload() // the outcome is logged and kept for status
}

// fileStamp is what a file looks like without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
	exists  bool
}

func statFiles(l workspace.Layout) [3]fileStamp {
	var out [3]fileStamp
	for i, rel := range []string{workspace.RolesFile, workspace.SettingsFile, workspace.PolicyFile} {
		if fi, err := os.Stat(l.Path(rel)); err == nil {
			out[i] = fileStamp{size: fi.Size(), modTime: fi.ModTime(), exists: true}
		}
	}
	return out
}

// versionOf is the version of a file's content, "" when it cannot be read.
func versionOf(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return config.FileVersion(b)
}
