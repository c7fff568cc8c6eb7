package team

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
	"github.com/shogun-dev/shogun/workspace"
)

// usageEvery is how often the roles' CLI records are read for tokens.
const usageEvery = 30 * time.Second

// readUsage reads the roles' CLI records for tokens every usageEvery, at
// once when a task closes (usageWanted), and a last time when ctx ends,
// so that a task's tokens are in the history soon after its report.
func (t *Team) readUsage(ctx context.Context) {
	tick := time.NewTicker(t.usageEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			t.collectUsage(context.WithoutCancel(ctx))
			return
		case <-tick.C:
		case <-t.usageWanted:
		}
		t.collectUsage(ctx)
	}
}

// collectUsage reads what each role's CLI wrote since the last time. Only
// records from this run on count: a CLI home may hold a person's own
// conversations from before.
func (t *Team) collectUsage(ctx context.Context) {
	cfg := t.Config()
	since := t.run.StartedAt
	// A file is one role's: the first whose folder it holds (two roles
	// with the same CLI home and folder cannot be told apart).
	claimed := map[string]bool{}
	for _, rc := range cfg.Roles {
		if !rc.Enabled {
			continue
		}
		// A role with accounts writes its records in each account's
		// config folder.
		envs := []map[string]string{rc.Command.Env}
		for _, a := range rc.Accounts {
			envs = append(envs, accountEnv(rc.Command.Env, a.Env))
		}
		for _, env := range envs {
			lookup := t.roleLookup(env)
			if rc.CLI == usage.CLICopilot {
				lookup = t.copilotLookup(rc.ID, lookup)
			}
			src, ok := usage.SourceFor(rc.ID, rc.CLI, rc.Command.Cwd, lookup)
			if !ok {
				continue
			}
			t.collectSource(ctx, src, since, claimed)
		}
	}
	if t.q != nil && ctx.Err() == nil {
		t.q.CheckBudgets() // what was read may spend a budget
	}
}

// collectSource reads the record files of one source changed since.
func (t *Team) collectSource(ctx context.Context, src usage.Source, since time.Time, claimed map[string]bool) {
	files, err := src.Files(since)
	if err != nil {
		t.log.Debug().Err(err).Str("role", src.Role).Msg("usage: list records")
		return
	}
	for _, path := range files {
		if ctx.Err() != nil || claimed[path] {
			continue
		}
		mine, err := t.readUsageFile(src, path, since)
		if err != nil {
			t.log.Warn().Err(err).Str("role", src.Role).Str("path", path).Msg("usage: read records")
		}
		claimed[path] = mine
	}
}

// accountEnv is a role's env with an account's over it.
func accountEnv(env, account map[string]string) map[string]string {
	out := make(map[string]string, len(env)+len(account))
	for k, v := range env {
		out[k] = v
	}
	for k, v := range account {
		out[k] = v
	}
	return out
}

// readUsageFile reads what path holds for src's role since the last time;
// mine is false for a file of another folder.
func (t *Team) readUsageFile(src usage.Source, path string, since time.Time) (mine bool, err error) {
	c, err := t.st.UsageCursor(src.Role, path)
	if err != nil {
		return false, err
	}
	recs, next, err := src.Read(path, c, since)
	var skipped *usage.SkippedError
	if errors.As(err, &skipped) {
		// Forged or broken lines: said once (the cursor moves past them),
		// the file's other records still count.
		t.log.Warn().Err(err).Str("role", src.Role).Msg("usage: lines skipped")
		err = nil
	}
	if err != nil || next == c {
		return !next.Foreign(), err
	}
	return !next.Foreign(), t.st.AddUsage(store.UsageFile{Role: src.Role, CLI: src.CLI, Path: path, Cursor: next}, recs, time.Now())
}

// roleLookup looks a variable up in a role's environment: its env entries
// over the supervisor's.
func (t *Team) roleLookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		if t.supEnv != nil {
			for _, kv := range t.supEnv {
				if name, v, ok := strings.Cut(kv, "="); ok && name == k {
					return v, true
				}
			}
			return "", false
		}
		return os.LookupEnv(k)
	}
}

// copilotLookup is lookup with the OpenTelemetry file the supervisor gives
// a copilot role that names none (usage.CopilotOTelFile).
func (t *Team) copilotLookup(role string, lookup func(string) (string, bool)) func(string) (string, bool) {
	path, set := usage.CopilotOTelFile(lookup, workspace.New(t.Config().Workspace).CopilotOTel(role))
	if !set {
		return lookup
	}
	return func(k string) (string, bool) {
		if k == usage.CopilotOTelFileVar {
			return path, true
		}
		return lookup(k)
	}
}

// wantUsage asks readUsage to read now (a task closed).
func (t *Team) wantUsage() {
	select {
	case t.usageWanted <- struct{}{}:
	default:
	}
}
