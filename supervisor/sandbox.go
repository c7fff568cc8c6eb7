package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/usage"
	"github.com/shogun-dev/shogun/workspace"
)

// errNoSandbox marks a role with sandbox: required that cannot be
// sandboxed here: like a missing program it is fatal at once, as retrying
// changes nothing.
var errNoSandbox = errors.New("cannot run sandboxed")

// guarded are the workspace's files a sandboxed role may read but never
// change, even when it works in the workspace itself: the configuration
// and policy, the instructions, shogun's own state and history, every
// CLI's project configuration (where hooks are named), the repository's
// own folder (hooks and aliases a person's git would run) and the other
// roles' worktrees. They match the default policy's guarded paths.
var guarded = []string{
	workspace.ConfigDir, workspace.RolesDir, workspace.RuntimeDir, workspace.DataDir,
	".claude", workspace.MCPJSONFile, ".codex", ".gemini", ".git", ".shogun",
}

// cliHomes are what each CLI keeps in its user's home folder and must be
// able to write there (sessions, logins, caches).
var cliHomes = map[string][]string{
	roles.CLIClaude:  {".claude", ".claude.json"},
	roles.CLICodex:   {".codex"},
	roles.CLIGemini:  {".gemini"},
	roles.CLICopilot: {".copilot"},
}

// spawnRole starts the program of role rc as opts says, inside the
// sandbox when the role asks for it (sandboxed).
func (s *Supervisor) spawnRole(rc config.Role, opts ptyhost.Options) (*ptyhost.Session, error) {
	cmd, err := s.sandboxed(rc, opts.Command)
	if err != nil {
		return nil, err
	}
	opts.Command = cmd
	return s.spawn(opts)
}

// sandboxed returns cmd wrapped in `shogun sandbox-exec` when the role asks
// for the sandbox and the system has one. A role that requires it where
// there is none gets errNoSandbox; one that prefers it runs as it is (start
// has said so once, see SandboxNotice).
func (s *Supervisor) sandboxed(rc config.Role, cmd ptyhost.Command) (ptyhost.Command, error) {
	if rc.Sandbox == sandbox.Off {
		return cmd, nil
	}
	if _, err := s.sandboxAvailable(); err != nil {
		if rc.Sandbox == sandbox.Preferred {
			return cmd, nil
		}
		return cmd, fmt.Errorf("%w: %w; set sandbox: preferred in config/roles.yaml to run it unsandboxed", errNoSandbox, err)
	}
	if s.exe == "" {
		return cmd, fmt.Errorf("%w: the shogun executable is not known", errNoSandbox)
	}
	program, err := ptyhost.LookPath(cmd.Path, cmd.Dir)
	if err != nil {
		return cmd, err
	}
	if !filepath.IsAbs(program) {
		program = filepath.Join(cmd.Dir, program)
	}
	spec := s.sandboxSpec(rc, cmd.Env)
	if temp := roleTemp(cmd.Env); spec.Splits(temp) {
		// The temp folder holds the workspace (a team tried out in
		// /tmp): granted entry by entry, it takes no new file, and a
		// CLI that makes its temp files there fails (Codex cannot open
		// its state database, as SQLite's journal goes to TMPDIR). The
		// role gets a temp folder of its own in the workspace instead.
		own := s.layout.RoleTemp(rc.ID)
		if err := os.MkdirAll(own, 0o700); err != nil {
			return cmd, fmt.Errorf("%w: make the role's temp folder: %w", errNoSandbox, err)
		}
		cmd.Env = append(slices.Clone(cmd.Env), "TMPDIR="+own)
		spec = s.sandboxSpec(rc, cmd.Env)
	}
	if rc.CLI == roles.CLIClaude && envValue(cmd.Env, "CLAUDE_CODE_TMPDIR") == "" {
		// Claude Code keeps its shell's state in /tmp whatever TMPDIR
		// says, unless told otherwise; /tmp may not be writable whole.
		cmd.Env = append(slices.Clone(cmd.Env), "CLAUDE_CODE_TMPDIR="+roleTemp(cmd.Env))
	}
	if rc.CLI == roles.CLICodex && filepath.Base(program) == roles.CLICodex {
		// Codex's own sandbox cannot run inside Landlock: bubblewrap
		// mounts and maps a user namespace (/proc/<pid>/uid_map), which a
		// Landlock-restricted process may not, so every command failed
		// ("bwrap: setting up uid map: Permission denied"), and its
		// legacy Landlock mode refuses a workspace-write policy without
		// bubblewrap. Its commands run under shogun's sandbox instead.
		cmd.Args = append([]string{"-c", `sandbox_mode="danger-full-access"`}, cmd.Args...)
	}
	cmd.Args = spec.Args(program, cmd.Args)
	cmd.Path = s.exe
	return cmd, nil
}

// sandboxSpec is what a sandboxed role may touch: it writes its working
// folder (less the guarded files when that is the workspace), its report
// and the command queue, the temp folder and its CLI's home; it reads
// everything but shogun's state (save the CLI configuration shogun gives
// it and the socket's pointer), the history, the other roles' worktrees and
// ~/.ssh.
func (s *Supervisor) sandboxSpec(rc config.Role, env []string) sandbox.Spec {
	home := envValue(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	temp := roleTemp(env)
	spec := sandbox.Spec{
		Write: []string{rc.Command.Cwd, s.layout.Reports(), s.layout.Commands(), temp},
		Hide:  []string{s.layout.State(), s.layout.Path(workspace.DataDir), s.cfg.Settings.Data.SQLitePath},
		Show:  []string{filepath.Join(s.layout.State(), "cli"), s.layout.SocketPointer()},
	}
	for _, g := range guarded {
		spec.NoWrite = append(spec.NoWrite, s.layout.Path(g))
	}
	if home != "" {
		for _, p := range append([]string{".cache", ".npm"}, cliHomes[rc.CLI]...) {
			dir := filepath.Join(home, p)
			if filepath.Ext(p) == "" {
				// Made now: a folder that does not exist at start is
				// outside every grant, and the CLI could not make it.
				_ = os.MkdirAll(dir, 0o700)
			}
			spec.Write = append(spec.Write, dir)
		}
		if rc.CLI == roles.CLICodex && envValue(env, "CODEX_HOME") != "" {
			spec.Write = append(spec.Write, envValue(env, "CODEX_HOME"))
		}
		spec.Hide = append(spec.Hide, filepath.Join(home, ".ssh"))
	}
	if p := envValue(env, usage.CopilotOTelFileVar); rc.CLI == roles.CLICopilot && p != "" {
		// Its tokens: the OpenTelemetry file (roleEnv).
		spec.Write = append(spec.Write, filepath.Dir(p))
	}
	if rc.Worktree != nil {
		spec.Write = append(spec.Write, worktreeGit(rc.Command.Cwd)...)
	}
	for _, other := range s.cfg.Roles {
		if other.ID != rc.ID {
			spec.Hide = append(spec.Hide, worktreeRoot(s, other))
		}
	}
	return spec
}

// worktreeRoot is the folder of role r's worktree (whether or not it
// exists): gitwork's .shogun/worktrees/<id> in the repository of its cwd,
// or of the workspace.
func worktreeRoot(s *Supervisor, r config.Role) string {
	folder := filepath.Join(filepath.FromSlash(".shogun/worktrees"), r.ID)
	if i := strings.Index(r.Command.Cwd, folder); i >= 0 {
		return r.Command.Cwd[:i+len(folder)]
	}
	return s.layout.Path(filepath.Join(".shogun", "worktrees", r.ID))
}

// worktreeGit are the parts of the repository's own folder a worktree role
// writes to commit on its branch: its worktree's private folder (index,
// HEAD), the objects, the refs and their logs. The repository's config
// and hooks stay out of reach, so nothing the agent writes runs later in
// a person's git.
func worktreeGit(cwd string) []string {
	dir := cwd
	for {
		data, err := os.ReadFile(filepath.Join(dir, ".git"))
		if err == nil {
			gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return nil
			}
			gitdir = strings.TrimSpace(gitdir)
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(dir, gitdir)
			}
			common := filepath.Dir(filepath.Dir(gitdir)) // <repo>/.git/worktrees/<name> → <repo>/.git
			return []string{gitdir, filepath.Join(common, "objects"), filepath.Join(common, "refs"), filepath.Join(common, "logs")}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// roleTemp is the temp folder of a role with environment env.
func roleTemp(env []string) string {
	if temp := envValue(env, "TMPDIR"); temp != "" {
		return temp
	}
	return os.TempDir()
}

// envValue is the value of name in env ("" when unset).
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// SandboxNotice is the one line start prints about the sandbox, or "" when
// no role of cfg (of ids, when given) asks for it or the system has one;
// available is sandbox.Available but in tests.
func SandboxNotice(cfg *config.Config, ids []string, available func() (string, error)) string {
	var fatal, unsandboxed []string
	for _, r := range cfg.Roles {
		if !r.Enabled || (len(ids) > 0 && !slices.Contains(ids, r.ID)) {
			continue
		}
		switch r.Sandbox {
		case sandbox.Required:
			fatal = append(fatal, r.ID)
		case sandbox.Preferred:
			unsandboxed = append(unsandboxed, r.ID)
		}
	}
	if len(fatal)+len(unsandboxed) == 0 {
		return ""
	}
	_, err := available()
	if err == nil {
		return ""
	}
	var what []string
	if len(unsandboxed) > 0 {
		what = append(what, strings.Join(unsandboxed, ", ")+" (sandbox: preferred) run unsandboxed")
	}
	if len(fatal) > 0 {
		what = append(what, strings.Join(fatal, ", ")+" (sandbox: true) are fatal")
	}
	return fmt.Sprintf("sandbox: %v: %s", err, strings.Join(what, "; "))
}
