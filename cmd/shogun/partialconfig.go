package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/textsafe"
)

// readingConfig loads the workspace configuration for a command that only
// reads (tasks, tokens) or queues (send): with errors in the files it goes
// on with the configuration as far as it parses (config.LoadPartial) after
// a warning on w naming each error, since a running supervisor carries on
// with its last good configuration and its history and queue are still
// there to read. A missing workspace is still an error.
func readingConfig(ws string, w io.Writer) (*config.Config, error) {
	if _, err := os.Stat(ws); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	cfg, err := config.LoadPartial(ws, configLookup)
	var errs *config.Errors
	switch {
	case err == nil:
		return cfg, nil
	case cfg == nil || !errors.As(err, &errs):
		return nil, fmt.Errorf("configuration has errors:\n%w", err)
	}
	fmt.Fprintf(w, "shogun: warning: configuration has errors (a running supervisor keeps its last good configuration; start refuses until they are fixed):\n")
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	return cfg, nil
}

// checkSendRoles refuses a command for a role that would not take it. With
// a configuration as it is in the files, that is queue.CheckRoles. With
// errors in the files (partial), a running supervisor takes the command
// with its last good configuration, so its roles decide (st); without one,
// the roles that parse in the files, which the next start runs once the
// errors are fixed. Never a role neither has.
func checkSendRoles(cfg *config.Config, partial bool, st *control.StatusReply, cmd queue.Command) error {
	if !partial || st == nil {
		if err := queue.CheckRoles(cfg, cmd); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		return nil
	}
	var ids []string
	for _, r := range st.Roles {
		ids = append(ids, r.ID)
	}
	for _, f := range []struct{ key, id string }{{"to", cmd.To}, {"from", cmd.From}} {
		if f.id != "" && !slices.Contains(ids, f.id) {
			return fmt.Errorf("send: unknown role %q in %s: the running supervisor has no such role (its roles: %s)",
				textsafe.Escape(f.id), f.key, textsafe.Escape(strings.Join(ids, ", ")))
		}
	}
	return nil
}
