package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:  "start",
		Usage: "run every enabled role in its own PTY until Ctrl-C or SIGTERM",
		Description: "Loads config/settings.yaml and config/roles.yaml (any error stops it before anything\n" +
			"runs), takes the workspace lock, and supervises the roles: readiness, startup prompts,\n" +
			"restarts with backoff, clean stop of every process tree on Ctrl-C / SIGTERM.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringSliceFlag{Name: "roles", Usage: "run only these role ids (comma-separated)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "validate the configuration and print what would run"},
			&cli.BoolFlag{Name: "new-history", Usage: "begin a new, empty history database although the archive shows an earlier one (it was lost)"},
			&cli.BoolFlag{Name: "rotate-token", Usage: "replace the web console's login token (runtime/state/ui.token) before serving it"},
			&cli.BoolFlag{Name: "wait", Usage: "run even when no role can start (every program missing): to fix config/roles.yaml while it runs"},
		},
		Action: func(c *cli.Context) error {
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			cfg, err := startConfig(ws)
			if err != nil {
				return err
			}
			ids := splitList(c.StringSlice("roles"))
			if c.Bool("dry-run") {
				return printPlan(c.App.Writer, ws, cfg, ids)
			}
			if missing, of := missingPrograms(cfg, ids); len(missing) > 0 && len(missing) == of && !c.Bool("wait") {
				// Nothing would run: say why and stop, rather than
				// supervise a team of fatal roles.
				return fmt.Errorf("%w\nnothing started; `%s start --wait` runs anyway, to fix config/roles.yaml while it runs",
					missingProgramsError(missing, of), selfCommand())
			}
			warnMissingPrograms(c.App.ErrWriter, cfg, ids)
			if line := supervisor.SandboxNotice(cfg, ids, sandbox.Available); line != "" {
				fmt.Fprintln(c.App.ErrWriter, "shogun: "+line)
			}
			ctx, stop := signalContext(context.Background())
			defer stop()
			_, err = runSupervisor(ctx, c, ws, cfg, ids, nil)
			return err
		},
	}
}

// selfExecutable is this binary, exported to roles as SHOGUN_EXE so that
// ${SHOGUN_EXE} in roles.yaml runs the simulated agent on every OS.
func selfExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return "shogun"
	}
	return exe
}

// warnMissingPrograms says, once, before the roles start, which programs
// are not found: those roles go fatal at once (each with its reason and
// fix in the log, the status and the notifications).
func warnMissingPrograms(w io.Writer, cfg *config.Config, ids []string) {
	missing, of := missingPrograms(cfg, ids)
	if len(missing) == 0 {
		return
	}
	var names []string
	for _, m := range missing {
		if !slices.Contains(names, m.Exec) {
			names = append(names, m.Exec)
		}
	}
	fmt.Fprintf(w, "shogun: %d of %d role(s) cannot start, their program is not found (%s): they go fatal at once; "+
		"`%[4]s start --dry-run` names each with its fix, `%[4]s init --demo --force` makes a team of simulated agents\n",
		len(missing), of, strings.Join(names, ", "), selfCommand())
}

// missingPrograms are the roles start would run (ids, else every enabled
// one) whose program is not found, and how many roles it would run.
func missingPrograms(cfg *config.Config, ids []string) ([]supervisor.MissingProgram, int) {
	roles := cfg.Enabled()
	if len(ids) > 0 {
		roles = nil
		for _, id := range ids {
			if r, ok := cfg.Role(id); ok {
				roles = append(roles, r)
			}
		}
	}
	return supervisor.MissingPrograms(roles), len(roles)
}

// selfCommand is how a person runs this binary again, for the hints the
// commands print: "shogun" when that name in PATH is this binary, else its
// path (a fresh build in bin/, not installed).
func selfCommand() string {
	exe := selfExecutable()
	if p, err := exec.LookPath("shogun"); err == nil {
		if a, err := os.Stat(p); err == nil {
			if b, err := os.Stat(exe); err == nil && os.SameFile(a, b) {
				return "shogun"
			}
		}
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "shogun" // go run's build, gone when the run ends
	}
	return quoteArg(exe)
}

// loadConfig loads the workspace configuration for a command.
func loadConfig(ws string) (*config.Config, error) { return readConfig(ws, "configuration has errors") }

// startConfig is loadConfig for a command that would start a team: an
// error means nothing started.
func startConfig(ws string) (*config.Config, error) {
	return readConfig(ws, "configuration has errors, nothing started")
}

// readConfig loads the workspace configuration; errors come after what.
func readConfig(ws, what string) (*config.Config, error) {
	if _, err := os.Stat(ws); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	cfg, err := config.Load(ws, configLookup)
	if err != nil {
		return nil, fmt.Errorf("%s:\n%w", what, err)
	}
	return cfg, nil
}

// loadConfigFiles loads the workspace configuration with configLookup.
func loadConfigFiles(ws string) (*config.Config, error) {
	if _, err := os.Stat(ws); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	return config.Load(ws, configLookup)
}

// configLookup is ${VAR} expansion from the environment plus SHOGUN_EXE,
// at start and at every reload of a running supervisor.
func configLookup(k string) (string, bool) {
	if k == "SHOGUN_EXE" {
		if v, ok := os.LookupEnv(k); ok {
			return v, true
		}
		return selfExecutable(), true
	}
	return os.LookupEnv(k)
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// signalContext ends on the first SIGINT or SIGTERM, with the signal as its
// cause, so the log can say why the supervisor stopped.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(fmt.Errorf("received %v", s))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// errStopRequested is why a supervisor stops on `shogun stop`.
var errStopRequested = errors.New("asked to stop (shogun stop, or POST /v1/stop)")

// runSupervisor runs the workspace's team until ctx ends or `shogun stop`.
// observe, when set, sees every supervisor event.
func runSupervisor(ctx context.Context, c *cli.Context, ws string, cfg *config.Config, ids []string, observe func(supervisor.Event)) (*supervisor.Supervisor, error) {
	var sup *supervisor.Supervisor
	err := withTeam(ctx, c, ws, cfg, ids, observe, func(ctx context.Context, t *team.Team) error {
		sup = t.Supervisor()
		return t.Run(ctx)
	})
	return sup, err
}

// withTeam takes the workspace lock, opens the log, the team and the control
// socket, and calls run with a context that also ends on `shogun stop`;
// everything is released when run returns.
func withTeam(ctx context.Context, c *cli.Context, ws string, cfg *config.Config, ids []string, observe func(supervisor.Event), run func(context.Context, *team.Team) error) error {
	// A supervisor outlives the terminal or pipe it prints to: under
	// `shogun start 2>&1 | tee log`, Ctrl-C ends tee too, and Go's runtime
	// would end the process at its next line on stdout or stderr (SIGPIPE)
	// before it had stopped the roles and recorded the run. With SIGPIPE
	// taken by Notify such a write fails with EPIPE, which the log's
	// terminal writer drops. (Not signal.Ignore: an ignored SIGPIPE would be
	// inherited by every role's program and the commands its agent runs.)
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	log, closer, err := openLogger(c, ws, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closer.Close()
	for _, warning := range cfg.Warnings {
		log.Warn().Str("file", warning.File).Int("line", warning.Line).Int("column", warning.Column).Msg(warning.Message)
	}
	// The roles' agents run as this user: they must not read the keys of
	// every account from this process's environment (/proc/<pid>/environ).
	if err := supervisor.ForbidInspection(); err != nil {
		log.Warn().Err(err).Msg("a process of this user can read the supervisor's environment")
	}
	if err := supervisor.CheckStateDir(ws); err != nil {
		return err
	}
	lock, err := supervisor.AcquireLock(workspace.New(ws).Lock())
	if err != nil {
		return err
	}
	defer func() {
		if err := lock.Release(); err != nil {
			log.Warn().Err(err).Msg("release lock")
		}
	}()
	writeGeminiPolicy(ws, cfg, log)
	t, err := team.Open(team.Options{Config: cfg, Roles: ids, Logger: log, Executable: selfExecutable(), OnEvent: observe,
		NewHistory: c.Bool("new-history"), StoreOptions: storeOptions(c, ctx), Lookup: configLookup})
	if err != nil {
		return err
	}
	defer t.Close()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	srv, err := control.Listen(ws, t, func() { cancel(errStopRequested) }, log)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	consoleDone := startConsole(ctx, c, ws, cfg, t, func() { cancel(errStopRequested) }, log)
	log.Info().Int("pid", os.Getpid()).Int("roles", len(t.Supervisor().Roles())).Str("run", t.RunID()).Str("workspace", ws).Msg("supervisor started; Ctrl-C or `shogun stop` stops it")
	started := time.Now()
	err = run(ctx, t)
	why := "the run ended"
	switch cause := context.Cause(ctx); {
	case err != nil:
		why = "error: " + err.Error()
	case cause != nil:
		why = cause.Error()
	}
	cancel(nil)
	if serr := <-served; serr != nil {
		log.Warn().Err(serr).Msg("control socket")
	}
	<-consoleDone
	log.Info().Str("why", why).Str("uptime", time.Since(started).Round(time.Millisecond).String()).Msg("supervisor stopped (" + why + "); every role's process tree is gone")
	return err
}

// printPlan prints what `start` would run, role by role.
func printPlan(w io.Writer, ws string, cfg *config.Config, ids []string) error {
	var roles []config.Role
	if len(ids) == 0 {
		roles = cfg.Enabled()
	} else {
		for _, id := range ids {
			r, ok := cfg.Role(id)
			if !ok {
				return fmt.Errorf("unknown role %q", id)
			}
			if !r.Enabled {
				return fmt.Errorf("role %q is disabled in config/roles.yaml", id)
			}
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 {
		return errors.New("no enabled roles in config/roles.yaml")
	}
	// What `start` would refuse for worktrees (git missing, a cwd outside
	// any repository, an unknown base), the dry run refuses too.
	wts, err := gitwork.New().ResolveRoles(context.Background(), roles)
	if err != nil {
		return fmt.Errorf("role worktrees, nothing would start:\n%w", err)
	}
	worktreeOf := map[string]gitwork.Worktree{}
	for _, wt := range wts {
		worktreeOf[wt.Role] = wt
	}
	// Each program is looked up as the supervisor will start it: from the
	// folder it runs in.
	runAs := make([]config.Role, len(roles))
	for i, r := range roles {
		runAs[i] = r
		if wt, ok := worktreeOf[r.ID]; ok && wt.Exists {
			runAs[i].Command.Cwd = wt.Dir
		}
	}
	missing := supervisor.MissingPrograms(runAs)
	slots := planSlots(cfg.Settings.Agent, roles, pendingWork(ws, cfg, roles))
	if len(missing) == 0 {
		fmt.Fprintf(w, "workspace %s: configuration OK, %s\n\n", ws, slots.summary(len(roles)))
	} else {
		fmt.Fprintf(w, "workspace %s: configuration OK, but %d of %d role(s) cannot start: their program is not found\n\n", ws, len(missing), len(roles))
	}
	for _, warning := range cfg.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	if len(cfg.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "ROLE\tNAME\tCLI\tTERMINAL\tRESTART\tCOMMAND")
	for _, r := range roles {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dx%d\t%s\t%s\n", r.ID, r.Name, r.CLI, r.Terminal.Cols, r.Terminal.Rows,
			r.Restart.Policy, commandLine(r.Command.Exec, r.Command.Args))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range roles {
		cwd := r.Command.Cwd
		if wt, ok := worktreeOf[r.ID]; ok {
			made := "made at start"
			if wt.Exists {
				made = "there already"
			}
			cwd = fmt.Sprintf("%s (worktree of %s on branch %s from %s, %s)", wt.Dir, wt.Repo, wt.Branch, wt.Base, made)
		}
		fmt.Fprintf(w, "%s: cwd %s, prompt %s, stop %q within %s%s\n", r.ID, cwd, r.PromptPath, r.Stop.Keys, r.Stop.Timeout, planBounds(r))
	}
	if line := slots.line(); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(missing) > 0 {
		return missingProgramsError(missing, len(roles))
	}
	return nil
}

// planBounds is what bounds a role in the dry run's plan, as start would
// apply it: its accounts, fallback, memory_max and idle_after (the
// settings' defaults resolved); "" for a role with none of them.
func planBounds(r config.Role) string {
	var b strings.Builder
	if len(r.Accounts) > 0 {
		keys := make([]string, len(r.Accounts))
		for i, a := range r.Accounts {
			keys[i] = a.Key
		}
		fmt.Fprintf(&b, ", accounts %s", strings.Join(keys, " then "))
		if r.AccountsSwitchAt > 0 {
			fmt.Fprintf(&b, " (switch at %d%%)", r.AccountsSwitchAt)
		}
	}
	if r.Fallback != "" {
		fmt.Fprintf(&b, ", fallback %s", r.Fallback)
	}
	if r.MemoryMax > 0 {
		fmt.Fprintf(&b, ", memory_max %s", r.MemoryMax)
	}
	if r.IdleAfter > 0 {
		fmt.Fprintf(&b, ", idle_after %s", r.IdleAfter)
	}
	return b.String()
}

// missingProgramsError names each role whose program is not found, with
// its fix, and the way to a team that needs no CLI at all.
func missingProgramsError(missing []supervisor.MissingProgram, of int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d role(s) cannot start, their program is not found (start would make them fatal at once):", len(missing), of)
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %v: %s", m.Role, m.Err, m.Fix)
	}
	fmt.Fprintf(&b, "\nor, for a team of simulated agents that needs no CLI: %s init --demo --force (overwrites the files shogun init wrote)", selfCommand())
	return errors.New(b.String())
}

// commandLine renders a command for people, quoting arguments with spaces.
func commandLine(exec string, args []string) string {
	parts := []string{quoteArg(exec)}
	for _, a := range args {
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"'") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// writeGeminiPolicy refreshes the files in which Gemini CLI
// (config.GeminiPolicyFile) and Codex (config.CodexRulesFile) find the
// policy's shell deny rules they refuse themselves, for the CLIs the team
// runs; a file a person wrote is left alone. A failure is a warning: the
// policy is still applied to what the CLI shows.
func writeGeminiPolicy(ws string, cfg *config.Config, log zerolog.Logger) {
	for _, f := range []struct {
		cli, file string
		write     func(string, *policy.Policy) (bool, error)
	}{
		{roles.CLIGemini, config.GeminiPolicyFile, config.WriteGeminiPolicy},
		{roles.CLICodex, config.CodexRulesFile, config.WriteCodexRules},
	} {
		if !slices.ContainsFunc(cfg.Roles, func(r config.Role) bool { return r.CLI == f.cli }) {
			continue
		}
		wrote, err := f.write(ws, cfg.Policy)
		if err != nil {
			log.Warn().Err(err).Str("cli", f.cli).Msg("the policy's deny rules for the CLI")
		} else if wrote {
			log.Info().Str("file", f.file).Msg("wrote the policy's shell deny rules for " + f.cli)
		}
	}
}
