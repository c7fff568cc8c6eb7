package queue

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// AwaitTaken waits for a running supervisor to take the command file that
// Send wrote to path, with id, at written (by this machine's clock; the
// error record is dated by the file system's): `shogun send` and the
// send_task MCP tool tell their caller what became of it. It polls every
// 50 ms, up to within (once when within < 0), until the file is gone and the
// history holds its task, or failed/ holds the reason it was refused. It
// returns that task, or that reason; neither when the time ran out first.
func AwaitTaken(ctx context.Context, cfg *config.Config, id, path string, written time.Time, within time.Duration) (*store.Task, string) {
	var st *store.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	check := func() (*store.Task, string) {
		if _, err := os.Lstat(path); err == nil {
			return nil, ""
		}
		if st == nil {
			db := cfg.Settings.Data.SQLitePath
			if _, err := os.Stat(db); err != nil {
				return nil, ""
			}
			var err error
			if st, err = store.Open(db); err != nil {
				st = nil
				return nil, ""
			}
		}
		if t, _ := st.TaskForCommand(id); t != nil {
			return t, ""
		}
		return nil, Refusal(cfg, filepath.Base(path), written)
	}
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if t, why := check(); t != nil || why != "" || within < 0 || time.Now().After(deadline) {
			return t, why
		}
		select {
		case <-ctx.Done():
			return nil, ""
		case <-tick.C:
		}
	}
}

// Refusal is why the queue refused the file named name that was dropped
// into its folders at or after since: the error of the record beside it in
// failed/, or "" when there is none.
func Refusal(cfg *config.Config, name string, since time.Time) string {
	path := filepath.Join(workspace.New(cfg.Workspace).Failed(), name+".error.yaml")
	fi, err := os.Lstat(path)
	if err != nil || fi.ModTime().Before(since.Add(-time.Second)) {
		return ""
	}
	data, err := ReadFile(path, Limits{MaxBytes: cfg.Settings.Queue.MaxFileBytes})
	if err != nil {
		return ""
	}
	var rec FailureRecord
	if yaml.Unmarshal(data, &rec) != nil {
		return ""
	}
	return rec.Error
}
