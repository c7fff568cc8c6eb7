package team

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

// The approvals hook works only while the files that name it stay as they
// were: an agent that can write .claude/settings.local.json can write
// "disableAllHooks": true there. The policy forbids such writes and the
// sandbox refuses them, but a role without the sandbox has other ways (a
// git alias, a script), so the team also watches the files. Every change
// it did not make is told (an attention line, a config-changed
// notification, an event naming the file); a file of shogun's own
// (runtime/state/cli, written for the CLIs at each start) is put back as
// it was; and a role whose CLI's hook is gone is held: no new task is
// typed into it until a person restarts it or dismisses the alerts.

// enforcementFiles are the workspace's files that name the approvals hook
// and shogun's MCP server for a CLI, slash separated; a pattern may hold
// "*". The CLI's own files count too: a person edits them, and each is
// where an agent would switch the hook off.
//
// config/policy.yaml is one of them: the rules themselves. It is applied
// as it changes (a person edits it), but an agent that rewrote it through
// a command the policy allows (a Makefile's recipe under `make`) must not
// do so unseen.
var enforcementFiles = []string{
	workspace.PolicyFile,
	".claude/settings.json", ".claude/settings.local.json", workspace.MCPJSONFile,
	".codex/config.toml", ".codex/hooks.json", ".codex/rules/*",
	".gemini/settings.json", ".gemini/*.toml",
}

// ownedFolder holds the configuration shogun writes for the CLIs at each
// start, outside the roles' folders: a change there is put back.
const ownedFolder = "runtime/state/cli"

// hookFiles are, per CLI, the files without which its hook is not
// loaded, and the files in which "disableAllHooks": true switches every
// hook off.
var hookFiles = map[string]struct{ needed, disabling []string }{
	roles.CLIClaude: {needed: []string{".claude/settings.json"}, disabling: []string{".claude/settings.json", ".claude/settings.local.json"}},
	roles.CLICodex:  {needed: []string{".codex/config.toml"}},
	roles.CLIGemini: {needed: []string{".gemini/settings.json"}},
}

// tamperSnapshot is the content of every enforcement file, by path
// relative to the workspace (slash separated).
type tamperSnapshot map[string][]byte

// userSettings are the Claude Code settings files of the homes of the
// team's Claude roles: with the hook given from runtime/state/cli and only
// the user's settings read besides, "disableAllHooks" there is how an
// agent (which may write its CLI's home, even in the sandbox) would turn
// the hook off. They are named by absolute path.
func (t *Team) userSettings() []string {
	var out []string
	for _, r := range t.Config().Roles {
		if r.CLI != roles.CLIClaude || !r.Enabled {
			continue
		}
		if f := userSettingsOf(r); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// userSettingsOf is Claude Code's user settings file for role r: in the
// HOME of its environment, else the supervisor's ("" when unknown).
func userSettingsOf(r config.Role) string {
	home := r.Command.Env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude", "settings.json")
}

// takeSnapshot reads every enforcement file of the workspace, and the
// extra files named by absolute path.
func takeSnapshot(l workspace.Layout, extra []string) tamperSnapshot {
	snap := tamperSnapshot{}
	for _, f := range extra {
		snap.read(l, f)
	}
	for _, pattern := range enforcementFiles {
		matches, _ := filepath.Glob(l.Path(pattern))
		for _, m := range matches {
			snap.read(l, m)
		}
	}
	_ = filepath.WalkDir(l.Path(ownedFolder), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			snap.read(l, path)
		}
		return nil
	})
	return snap
}

func (s tamperSnapshot) read(l workspace.Layout, path string) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return
	}
	if b, err := os.ReadFile(path); err == nil {
		s[workspace.RelTo(l.Root, path)] = b
	}
}

// watchEnforcement watches the enforcement files until ctx ends (see the
// comment at the top of this file).
func (t *Team) watchEnforcement(ctx context.Context, settle, poll time.Duration) {
	l := workspace.New(t.Config().Workspace)
	extra := t.userSettings()
	known := takeSnapshot(l, extra)
	var events <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		for _, dir := range []string{"", ".claude", ".codex", ".codex/rules", ".gemini", ownedFolder} {
			_ = w.Add(l.Path(dir)) // a folder made later is seen by the poll
		}
		for _, f := range extra {
			_ = w.Add(filepath.Dir(f))
		}
		events = w.Events
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	due := time.NewTimer(settle)
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			due.Reset(settle)
		case <-tick.C:
			t.checkEnforcement(l, extra, known)
		case <-due.C:
			t.checkEnforcement(l, extra, known)
		}
	}
}

// checkEnforcement compares the files with known, tells every change,
// puts shogun's own files back, holds the roles whose hook is gone, and
// updates known to what is now there.
func (t *Team) checkEnforcement(l workspace.Layout, extra []string, known tamperSnapshot) {
	now := takeSnapshot(l, extra)
	var changed []string
	for rel := range known {
		if _, ok := now[rel]; !ok {
			changed = append(changed, rel)
		}
	}
	for rel, b := range now {
		if old, ok := known[rel]; !ok || !bytes.Equal(old, b) {
			changed = append(changed, rel)
		}
	}
	slices.Sort(changed)
	for _, rel := range changed {
		old, had := known[rel]
		_, has := now[rel]
		if owned := strings.HasPrefix(rel, ownedFolder+"/"); owned && (!had || t.startedWithin(ownedGrace)) {
			continue // a role's start writing its CLI's configuration
		}
		what := "changed"
		switch {
		case !had:
			what = "created"
		case !has:
			what = "removed"
		}
		msg := fmt.Sprintf("%s was %s, not by shogun", rel, what)
		if had && strings.HasPrefix(rel, ownedFolder+"/") {
			if err := atomicfile.Write(l.Path(rel), old, 0o600); err != nil {
				msg += fmt.Sprintf("; putting back what shogun wrote failed: %v", err)
			} else {
				msg += "; shogun put back what it wrote"
				now[rel] = old
			}
		} else {
			msg += "; if you did not make this change, an agent may have: check it"
		}
		t.tampered(rel, msg)
	}
	before := maps.Clone(known)
	clear(known)
	maps.Copy(known, now)
	if len(changed) > 0 {
		t.holdHookless(l, before, now)
	}
}

// ownedGrace is how long after a role's program started a change under
// runtime/state/cli is taken as the supervisor's own: it writes the CLI's
// configuration there at each start, anew when the configuration changed.
const ownedGrace = 5 * time.Second

// startedWithin reports whether a role's program started within d.
func (t *Team) startedWithin(d time.Duration) bool {
	last := t.lastStart.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// tampered tells a person about one changed enforcement file.
func (t *Team) tampered(rel, msg string) {
	t.log.Warn().Str("path", rel).Msg("enforcement file changed: " + msg)
	t.notifier.Send(notify.Event{Kind: notify.KindConfigChanged, Message: textsafe.Escape(msg)})
	t.q.AddAttention(msg)
	t.recordEvent("", notify.KindConfigChanged, msg)
}

// holdHookless holds every running role whose CLI's hook the change from
// before to now took away: a file it needs removed, or disableAllHooks
// set.
func (t *Team) holdHookless(l workspace.Layout, before, now tamperSnapshot) {
	for _, r := range t.sup.Roles() {
		rc := r.Config()
		hf, ok := hookFiles[rc.CLI]
		if !ok {
			continue
		}
		var why string
		for _, f := range hf.needed {
			if _, had := before[f]; had {
				if _, has := now[f]; !has {
					why = f + " was removed"
				}
			}
		}
		disabling := hf.disabling
		if rc.CLI == roles.CLIClaude {
			if f := userSettingsOf(rc); f != "" {
				disabling = append(slices.Clone(disabling), workspace.RelTo(l.Root, f))
			}
		}
		for _, f := range disabling {
			if disablesHooks(now[f]) && !disablesHooks(before[f]) {
				why = f + " sets disableAllHooks"
			}
		}
		if why == "" {
			continue
		}
		msg := fmt.Sprintf("role %s is held, no new task is typed into it: its approvals hook may be off (%s); fix the file, then `shogun restart %s` or `shogun status --dismiss`", rc.ID, why, rc.ID)
		r.Hold(why)
		t.log.Warn().Str("role", rc.ID).Msg(msg)
		t.notifier.Send(notify.Event{Kind: notify.KindConfigChanged, Role: rc.ID, Message: textsafe.Escape(msg)})
		t.q.AddAttention(msg)
		t.recordEvent(rc.ID, notify.KindConfigChanged, msg)
	}
}

// disablesHooks reports whether a Claude Code settings file turns every
// hook off.
func disablesHooks(b []byte) bool {
	// By the exact key, as Claude Code reads it (the last of repeated
	// keys wins in both): a struct field would also take any case of it,
	// and "DisableAllHooks": false after the real key read as false.
	var s map[string]json.RawMessage
	return b != nil && json.Unmarshal(b, &s) == nil && string(s["disableAllHooks"]) == "true"
}
