package team

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/gitwork"
)

// How long git may take: making a worktree checks out the whole tree,
// which can take minutes in a large repository; reading HEAD for a report
// takes milliseconds, and a report never waits long for it.
const (
	worktreeTimeout = 10 * time.Minute
	headTimeout     = 10 * time.Second
)

// runRoles are the enabled roles the run starts: those named in ids, or
// every enabled one. Unknown and disabled ids are left to the supervisor,
// which refuses them.
func runRoles(cfg *config.Config, ids []string) []config.Role {
	if len(ids) == 0 {
		return cfg.Enabled()
	}
	var out []config.Role
	for _, id := range ids {
		if r, ok := cfg.Role(id); ok && r.Enabled {
			out = append(out, r)
		}
	}
	return out
}

// prepareWorktrees makes (or reuses) the worktree of every role of the run
// that asks for one, and returns the configuration the run uses: those
// roles work in their worktrees. Any problem stops the start before a role
// runs.
func prepareWorktrees(cfg *config.Config, ids []string, g gitwork.Git, log zerolog.Logger) (*config.Config, error) {
	ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
	defer cancel()
	wts, err := g.ResolveRoles(ctx, runRoles(cfg, ids))
	if err != nil {
		return nil, fmt.Errorf("role worktrees, nothing started:\n%w", err)
	}
	for i, w := range wts {
		made := !w.Exists
		if wts[i], err = g.Ensure(ctx, w, cfg.Workspace); err != nil {
			return nil, err
		}
		msg := "worktree reused"
		if made {
			msg = "worktree made"
		}
		log.Info().Str("role", w.Role).Str("path", w.Path).Str("branch", w.Branch).Str("base", w.Base).Str("cwd", w.Dir).Msg(msg)
	}
	return gitwork.WithWorktrees(cfg, wts), nil
}

// headCommits is the queue's HeadCommit: for every role of the run that
// works in a git repository (its worktree, or any cwd in one), the commit
// checked out there; nil when no role does.
func headCommits(cfg *config.Config, ids []string, g gitwork.Git, log zerolog.Logger) func(string) string {
	ctx, cancel := context.WithTimeout(context.Background(), headTimeout)
	defer cancel()
	dirs := map[string]string{}
	for _, r := range runRoles(cfg, ids) {
		if g.InRepository(ctx, r.Command.Cwd) {
			dirs[r.ID] = r.Command.Cwd
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	return func(role string) string {
		dir, ok := dirs[role]
		if !ok {
			return ""
		}
		ctx, cancel := context.WithTimeout(context.Background(), headTimeout)
		defer cancel()
		head, err := g.Head(ctx, dir)
		if err != nil {
			log.Warn().Err(err).Str("role", role).Str("path", dir).Msg("read the role's HEAD commit for its report")
		}
		return head
	}
}
