package team

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

// A running team takes changes of config/roles.yaml and
// config/settings.yaml into use without a restart (live configuration):
// the files are watched (watch.go), `shogun reload` asks for it, and the
// API's role edits save roles.yaml and apply it in the same step. Each way
// goes through apply, one at a time. A configuration that does not load is
// not applied: the team runs on with the one it has, and says why (the log,
// status, the dashboard, the API) until the files load again.

// liveConfig is the team's configuration state. Team.cfgMu serialises
// every reload and edit and guards seen and selected; cur, err and changed
// are written with Team.stateMu held too, so that status and the API read
// them while a reload waits for roles to stop.
type liveConfig struct {
	cur      *config.Config
	err      error           // why the files as they are now are not applied
	selected map[string]bool // start --roles; nil: every enabled role
	lookup   func(string) (string, bool)
	seen     fileVersions // the files' content last applied or refused
	changed  chan struct{}
}

// fileVersions are the contents of the configuration files, as
// config.FileVersion says ("" when the file cannot be read).
type fileVersions struct{ roles, settings, policy string }

// readVersions reads the versions of the files as they are now.
func readVersions(ws string) fileVersions {
	l := workspace.New(ws)
	return fileVersions{roles: versionOf(l.Path(workspace.RolesFile)), settings: versionOf(l.Path(workspace.SettingsFile)),
		policy: versionOf(l.Path(workspace.PolicyFile))}
}

// Config is the configuration in effect: the one the team started with, or
// the last one a reload applied.
func (t *Team) Config() *config.Config {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	return t.live.cur
}

// ConfigError is why the configuration files as they are now are not in
// effect (*config.Errors for problems in them), or nil.
func (t *Team) ConfigError() error {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	return t.live.err
}

// ConfigChanged returns a channel that is closed at the next reload,
// applied or refused.
func (t *Team) ConfigChanged() <-chan struct{} {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	return t.live.changed
}

// Reload reads both configuration files again and takes them into use: it
// starts added or enabled roles, stops removed or disabled ones, restarts
// roles whose command or terminal changed, and gives the others their new
// settings. A configuration with errors changes nothing; the error
// (*config.Errors) is returned and kept for ConfigError.
func (t *Team) Reload() (config.Reload, error) {
	t.cfgMu.Lock()
	defer t.cfgMu.Unlock()
	ws := t.live.cur.Workspace
	seen := readVersions(ws)
	next, err := config.Load(ws, t.live.lookup)
	t.live.seen = seen
	if err == nil {
		next, err = t.prepareWorktrees(next, t.selectedIDs())
	}
	if err != nil {
		t.refused(err)
		return config.Reload{}, err
	}
	return t.apply(next), nil
}

// EditRoles makes an edit of config/roles.yaml (see config.RoleEdit) and
// takes the result into use as Reload does. An edit whose result does not
// load saves nothing and changes nothing; its error is returned, and the
// configuration error of the files (ConfigError) stays as it was.
func (t *Team) EditRoles(e config.RoleEdit) (config.Reload, error) {
	t.cfgMu.Lock()
	defer t.cfgMu.Unlock()
	ws := t.live.cur.Workspace
	edited, err := e.Apply(ws, t.live.lookup)
	if err != nil {
		return config.Reload{}, err
	}
	t.live.seen = fileVersions{roles: edited.Version, settings: versionOf(workspace.New(ws).Path(workspace.SettingsFile)),
		policy: versionOf(workspace.New(ws).Path(workspace.PolicyFile))}
	next, err := t.prepareWorktrees(edited.Config, t.selectedIDs())
	if err != nil {
		err = fmt.Errorf("%s was saved but is not applied: %w", config.RolesFile, err)
		t.refused(err)
		return config.Reload{}, err
	}
	return t.apply(next), nil
}

// refused records a configuration that was not applied.
func (t *Team) refused(err error) {
	var errs *config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs.List {
			t.log.Error().Str("file", e.File).Int("line", e.Line).Int("column", e.Column).Msg("configuration not applied: " + e.Message)
		}
	} else {
		t.log.Error().Err(err).Msg("configuration not applied")
	}
	t.log.Warn().Msg("the supervisor runs on with the configuration it had; fix the files and they are applied at once")
	t.setConfigState(err)
	t.q.SetConfigError(err)
	t.recordEvent("", "config", "configuration not applied: "+strings.ReplaceAll(err.Error(), "\n", "; "))
}

// setConfigState records the outcome of a reload and wakes ConfigChanged.
func (t *Team) setConfigState(err error) {
	t.stateMu.Lock()
	t.live.err = err
	close(t.live.changed)
	t.live.changed = make(chan struct{})
	t.stateMu.Unlock()
}

// apply takes next into use; t.cfgMu is held.
func (t *Team) apply(next *config.Config) config.Reload {
	cur := t.live.cur
	var res config.Reload
	for _, c := range config.Diff(cur, next) {
		if t.live.selected == nil || t.live.selected[c.Role] {
			res.Changes = append(res.Changes, c)
		}
	}
	_, res.AtNextStart = config.SettingsChanges(cur.Settings, next.Settings)
	now := time.Now()

	// Stops first: each role's worker ends before anything else changes
	// (it may be typing into the role), then the programs stop, side by
	// side since each may take its stop timeout, then their tasks are
	// dealt with.
	var stops []config.RoleChange
	for _, c := range res.Changes {
		if c.Action == config.ActionStop {
			stops = append(stops, c)
			t.q.RemoveAgent(c.Role)
		}
	}
	t.q.SetConfig(next)
	t.setSkills(next.Settings.Skills)
	t.setHeads(t.headCommits(next))
	if err := t.st.SyncRoles(roleInfos(next), now); err != nil {
		t.log.Warn().Err(err).Msg("record the roles")
	}
	var wg sync.WaitGroup
	for _, c := range stops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			why := "disabled in config/roles.yaml"
			if c.Keys[0] == "removed" {
				why = "removed from config/roles.yaml"
			}
			t.sup.RemoveRole(c.Role, why)
		}()
	}
	wg.Wait()
	for _, c := range stops {
		if err := t.q.ReleaseTasks(c.Role, c.Keys[0] == "removed"); err != nil {
			t.log.Error().Err(err).Str("role", c.Role).Msg("release the tasks of a stopped role")
		}
	}
	for _, c := range res.Changes {
		rc, _ := next.Role(c.Role)
		switch c.Action {
		case config.ActionUpdate, config.ActionRestart:
			r, ok := t.sup.Role(c.Role)
			if !ok {
				continue
			}
			if err := r.SetConfig(rc); err != nil {
				t.log.Error().Err(err).Str("role", c.Role).Msg("update role")
				continue
			}
			// A role a person stopped (or whose program exited under
			// restart policy never) takes its new command at its next
			// start, and so does one that sleeps or waits for a slot (no
			// program runs: waking it would spend a slot on nothing);
			// every other one, a fatal one included, starts again.
			if st := r.State(); c.Action == config.ActionRestart && st != supervisor.Stopped && st != supervisor.Sleeping && st != supervisor.WaitingSlot {
				r.Restart()
			}
		case config.ActionStart:
			if err := t.startRole(rc, now); err != nil {
				t.log.Error().Err(err).Str("role", c.Role).Msg("start role")
			}
		}
	}
	t.stateMu.Lock()
	t.live.cur = next
	t.stateMu.Unlock()
	for _, c := range res.Changes {
		if rc, ok := next.Role(c.Role); ok && changesProgram(c) {
			t.programChanged(c, rc)
			continue
		}
		t.log.Info().Str("role", c.Role).Str("action", string(c.Action)).Strs("keys", c.Keys).Msg("configuration applied: " + string(c.Action) + " " + c.Role)
	}
	t.guardsChanged(res, cur, next)
	for _, k := range res.AtNextStart {
		t.log.Warn().Str("setting", k).Msg("setting changed; it takes effect at the next `shogun start`")
	}
	for _, w := range next.Warnings {
		t.log.Warn().Str("file", w.File).Int("line", w.Line).Int("column", w.Column).Msg(w.Message)
	}
	t.setConfigState(nil)
	t.q.SetConfigError(nil)
	t.recordEvent("", "config", "configuration applied: "+describeChanges(res))
	return res
}

// changesProgram says whether c changes what program runs for its role: a
// role added or enabled, or a new command exec, args, env or cwd.
func changesProgram(c config.RoleChange) bool {
	if c.Action == config.ActionStart {
		return true
	}
	if c.Action == config.ActionRestart {
		for _, k := range c.Keys {
			if strings.HasPrefix(k, "command.") {
				return true
			}
		}
	}
	return false
}

// programChanged tells a person that a reload changed what a role runs: a
// warning in the log, a config-changed notification and a line under
// attention (status, dashboard, the console's Team page). Agents write to
// config/roles.yaml as easily as a person does, and a live reload applies
// it within a second; a change nobody meant must not pass as one info line.
func (t *Team) programChanged(c config.RoleChange, rc config.Role) {
	what := fmt.Sprintf("role %s runs a new command (%s changed in %s)", c.Role, strings.Join(programKeys(c.Keys), ", "), config.RolesFile)
	switch {
	case c.Action == config.ActionStart && c.Keys[0] == "added":
		what = fmt.Sprintf("role %s was added to %s and starts", c.Role, config.RolesFile)
	case c.Action == config.ActionStart:
		what = fmt.Sprintf("role %s was enabled in %s and starts", c.Role, config.RolesFile)
	}
	msg := fmt.Sprintf("%s: %s in %s; if you did not make this change, an agent may have: check %s",
		what, commandLine(rc.Command), rc.Command.Cwd, config.RolesFile)
	t.log.Warn().Str("role", c.Role).Str("action", string(c.Action)).Strs("keys", c.Keys).
		Str("exec", rc.Command.Exec).Strs("args", rc.Command.Args).Str("cwd", rc.Command.Cwd).Msg("configuration changed what a role runs: " + msg)
	t.notifier.Send(notify.Event{Kind: notify.KindConfigChanged, Role: c.Role, Message: textsafe.Escape(msg)})
	t.q.AddAttention(msg)
}

// programKeys are the command.* keys among keys.
func programKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, "command.") {
			out = append(out, k)
		}
	}
	return out
}

// maxCommandLine bounds the command line shown when it changed.
const maxCommandLine = 200

// commandLine is a command's exec and args as one line, each quoted, cut
// to maxCommandLine characters. Its env is not shown: values there are
// often secrets.
func commandLine(c config.Command) string {
	parts := []string{strconv.Quote(c.Exec)}
	for _, a := range c.Args {
		parts = append(parts, strconv.Quote(a))
	}
	s := strings.Join(parts, " ")
	if r := []rune(s); len(r) > maxCommandLine {
		s = string(r[:maxCommandLine-1]) + "…"
	}
	return s
}

// startRole adds a role to the supervisor and hands it work.
func (t *Team) startRole(rc config.Role, at time.Time) error {
	r, err := t.sup.AddRole(rc)
	if err != nil {
		return err
	}
	if err := t.st.RecordLog(t.run.ID, rc.ID, workspace.LogsDir+"/"+rc.ID+".log", at); err != nil {
		t.log.Warn().Err(err).Str("role", rc.ID).Msg("record the role's log")
	}
	return t.q.AddAgent(r)
}

// StartRole starts a configured role's program without a configuration
// change: a role stopped by StopRole, a stopped or fatal one, or an
// enabled role this supervisor was not started with (start --roles). A
// running role is left as it is.
func (t *Team) StartRole(id string) error {
	t.cfgMu.Lock()
	defer t.cfgMu.Unlock()
	if r, ok := t.sup.Role(id); ok {
		if !r.State().Running() {
			r.Restart()
		}
		return nil
	}
	rc, ok := t.live.cur.Role(id)
	switch {
	case !ok:
		return fmt.Errorf("start %s: %w", id, config.ErrRoleNotFound)
	case !rc.Enabled:
		return fmt.Errorf("start %s: %w (enable it first)", id, config.ErrRoleDisabled)
	}
	// A role with a worktree runs in it, made now if need be.
	adjusted, err := t.prepareWorktrees(t.live.cur, []string{id})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	rc, _ = adjusted.Role(id)
	if t.live.selected != nil {
		t.live.selected[id] = true
	}
	t.stateMu.Lock()
	t.live.cur = adjusted
	t.stateMu.Unlock()
	t.q.SetConfig(adjusted)
	t.setHeads(t.headCommits(adjusted))
	return t.startRole(rc, time.Now())
}

// StopRole stops a running role's program without a configuration change;
// it stays stopped until StartRole or `shogun restart`. Its task in flight
// stays its own and is delivered again when it starts.
func (t *Team) StopRole(id string) error {
	r, ok := t.sup.Role(id)
	if !ok {
		if _, known := t.Config().Role(id); !known {
			return fmt.Errorf("stop %s: %w", id, config.ErrRoleNotFound)
		}
		return fmt.Errorf("stop %s: %w", id, supervisor.ErrNotRunning)
	}
	r.Stop()
	return nil
}

// roleInfos are the roles of cfg as the history records them.
func roleInfos(cfg *config.Config) []store.RoleInfo {
	infos := make([]store.RoleInfo, 0, len(cfg.Roles))
	for _, r := range cfg.Roles {
		infos = append(infos, store.RoleInfo{ID: r.ID, Name: r.Name, PromptPath: r.PromptPath, Enabled: r.Enabled})
	}
	return infos
}

// describeChanges is a reload in one line.
func describeChanges(res config.Reload) string {
	var parts []string
	for _, c := range res.Changes {
		parts = append(parts, c.String())
	}
	if len(res.AtNextStart) > 0 {
		parts = append(parts, "at the next start: "+strings.Join(res.AtNextStart, ", "))
	}
	if len(parts) == 0 {
		return "nothing changed"
	}
	return strings.Join(parts, "; ")
}

func (t *Team) recordEvent(role, kind, msg string) {
	if err := t.st.AddEvent(store.Event{At: time.Now(), RunID: t.run.ID, Role: role, Kind: kind, Message: msg}); err != nil {
		t.log.Warn().Err(err).Msg("record event")
	}
}

// prepareWorktrees is prepareWorktrees (worktrees.go) while the team runs:
// git's processes are the team's own children, which the supervisor must
// leave alone.
func (t *Team) prepareWorktrees(cfg *config.Config, ids []string) (out *config.Config, err error) {
	t.sup.ForeignChildren(func() { out, err = prepareWorktrees(cfg, ids, t.git, t.log) })
	return out, err
}

// headCommits is headCommits (worktrees.go) for the roles of cfg that run,
// safe while the team runs, as prepareWorktrees is; so is the function it
// returns.
func (t *Team) headCommits(cfg *config.Config) func(string) string {
	var f func(string) string
	t.sup.ForeignChildren(func() { f = headCommits(cfg, t.selectedIDs(), t.git, t.log) })
	if f == nil {
		return nil
	}
	return func(role string) (head string) {
		t.sup.ForeignChildren(func() { head = f(role) })
		return head
	}
}

// setHeads records the HEAD-commit reader of the roles in effect.
func (t *Team) setHeads(f func(string) string) { t.heads.Store(&f) }

// headCommit is the queue's HeadCommit: the commit checked out where the
// role works, "" when that is not in a git repository.
func (t *Team) headCommit(role string) string {
	if f := t.heads.Load(); f != nil && *f != nil {
		return (*f)(role)
	}
	return ""
}

// selectedIDs is the start --roles selection as a list, nil for every
// enabled role; t.cfgMu is held.
func (t *Team) selectedIDs() []string {
	if t.live.selected == nil {
		return nil
	}
	ids := make([]string, 0, len(t.live.selected))
	for id := range t.live.selected {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
