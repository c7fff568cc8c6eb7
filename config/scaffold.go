package config

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/workspace"
)

// The default configuration files, per language: settings.yaml, roles.yaml
// for the real CLIs and roles-demo.yaml for the simulated agent; and
// policy.yaml, the same in every language (its rules are its text).
//
//go:embed defaults
var defaults embed.FS

// ScaffoldOptions are the choices of `shogun init`.
type ScaffoldOptions struct {
	// Force overwrites files that exist; without it they are left alone.
	Force bool
	// Demo writes a roles.yaml that runs the simulated agent in every role.
	Demo bool
	// Lang is the language of the role files and comments: "en" (also for
	// "") or "ja".
	Lang string
	// Executable is the shogun program that the CLIs' MCP configuration
	// files (MCPClientFiles) start; "" means "shogun", looked up in PATH.
	Executable string
}

// ScaffoldAction says what Scaffold did with one path.
type ScaffoldAction int

// What Scaffold can do with a path.
const (
	Created ScaffoldAction = iota
	Skipped
	Overwritten
	// Updated: lines were added to a file a person keeps (.gitignore).
	Updated
)

// String gives the word `shogun init` prints.
func (a ScaffoldAction) String() string {
	switch a {
	case Created:
		return "created"
	case Skipped:
		return "skipped"
	case Overwritten:
		return "overwritten"
	case Updated:
		return "updated"
	}
	return fmt.Sprintf("ScaffoldAction(%d)", int(a))
}

// ScaffoldResult is one path Scaffold handled.
type ScaffoldResult struct {
	// Path is relative to the workspace, slash separated; folders end in "/".
	Path string
	// Action is what was done: Created, Skipped (it existed) or Overwritten.
	Action ScaffoldAction
}

// workspaceDirs are created empty; files are listed separately so that the
// results read in the order a person would look for them.
var workspaceDirs = []string{
	workspace.CommandsDir, workspace.TasksDir, workspace.ReportsDir, workspace.ArchiveDir, workspace.FailedDir,
	workspace.LogsDir, workspace.StateDir, workspace.DataDir, "skills/codex", "skills/copilot",
}

// Scaffold creates a workspace in dir (made if missing): the configuration,
// the role files and the empty runtime, data and skills folders. An existing
// file is kept unless opts.Force is set, so running `shogun init` in a
// workspace someone has edited is safe. Folders that exist are reported as
// Skipped. The results list every path in the order handled; on error they
// cover what was done before it.
func Scaffold(dir string, opts ScaffoldOptions) ([]ScaffoldResult, error) {
	lang := opts.Lang
	if lang == "" {
		lang = roles.LangEnglish
	}
	if lang != roles.LangEnglish && lang != roles.LangJapanese {
		return nil, fmt.Errorf("scaffold: unknown language %q (want %s or %s)", opts.Lang, roles.LangEnglish, roles.LangJapanese)
	}
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}

	rolesFile := "roles.yaml"
	if opts.Demo {
		rolesFile = "roles-demo.yaml"
	}
	type file struct {
		rel     string
		content func() ([]byte, error)
	}
	files := []file{
		{SettingsFile, func() ([]byte, error) { return defaults.ReadFile("defaults/" + lang + "/settings.yaml") }},
		{RolesFile, func() ([]byte, error) { return defaults.ReadFile("defaults/" + lang + "/" + rolesFile) }},
		{PolicyFile, func() ([]byte, error) { return defaults.ReadFile("defaults/policy.yaml") }},
	}
	for _, kind := range roles.Kinds() {
		files = append(files, file{"roles/" + kind + ".md", func() ([]byte, error) { return roles.File(lang, kind) }})
	}
	mcpFiles, err := MCPClientFiles(opts.Executable)
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	for _, f := range mcpFiles {
		files = append(files, file{f.Path, func() ([]byte, error) { return f.Content, nil }})
	}

	var results []ScaffoldResult
	for _, d := range []string{"config", "roles"} {
		r, err := scaffoldDir(dir, d)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	for _, f := range files {
		content, err := f.content()
		if err != nil {
			return results, fmt.Errorf("scaffold %s: %w", f.rel, err)
		}
		path := absPath(dir, f.rel)
		// The CLIs' folders (.claude/, .codex/, .gemini/) hold nothing else
		// of shogun's: made as needed, not listed.
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return results, fmt.Errorf("scaffold %s: %w", f.rel, err)
		}
		action, err := writeFile(path, content, opts.Force)
		if err != nil {
			return results, fmt.Errorf("scaffold %s: %w", f.rel, err)
		}
		results = append(results, ScaffoldResult{Path: f.rel, Action: action})
	}
	// The policy's shell deny rules for Gemini CLI and Codex, as start
	// writes them, so that start changes nothing a person committed (Gemini
	// CLI also complains of a path in adminPolicyPaths that is missing).
	p := GeminiPolicy(nil) // a configuration a person broke has no policy to read
	cfg, err := Load(dir, func(string) (string, bool) { return "", false })
	if err == nil {
		p = GeminiPolicy(cfg.Policy)
	}
	for _, g := range []struct {
		rel     string
		content []byte
	}{{GeminiPolicyFile, p}, {CodexRulesFile, codexRulesOf(cfg)}} {
		path := absPath(dir, g.rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return results, fmt.Errorf("scaffold %s: %w", g.rel, err)
		}
		action, err := writeFile(path, g.content, opts.Force)
		if err != nil {
			return results, fmt.Errorf("scaffold %s: %w", g.rel, err)
		}
		results = append(results, ScaffoldResult{Path: g.rel, Action: action})
	}
	for _, d := range workspaceDirs {
		r, err := scaffoldDir(dir, d)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	r, err := scaffoldGitignore(dir)
	if err != nil {
		return results, err
	}
	return append(results, r), nil
}

// codexRulesOf is CodexRules for cfg's policy, or for none when the
// configuration does not load.
func codexRulesOf(cfg *Config) []byte {
	if cfg == nil {
		return CodexRules(nil)
	}
	return CodexRules(cfg.Policy)
}

// gitignoreLines are what a repository must never take from a workspace:
// the console's token and sessions, the lock and pid ledger (runtime/state),
// every task body (data/), the agents' terminal output (runtime/logs), and
// the queue's record of done and rejected files. The queue's live folders
// (commands, tasks, reports) stay visible: Gemini CLI's read tool refuses a
// file git ignores, and an agent must read its task file.
var gitignoreLines = []string{
	"/" + workspace.StateDir + "/",
	"/" + workspace.LogsDir + "/",
	"/" + workspace.DataDir + "/",
	"/" + workspace.ArchiveDir + "/",
	"/" + workspace.FailedDir + "/",
	"/" + workspace.DashboardFile,
}

// gitignoreHeader opens shogun's block in .gitignore.
const gitignoreHeader = "# shogun: the workspace's state, history and logs (shogun init)"

// scaffoldGitignore adds the lines of gitignoreLines that .gitignore lacks,
// under gitignoreHeader, keeping what a person wrote there.
func scaffoldGitignore(dir string) (ScaffoldResult, error) {
	res := ScaffoldResult{Path: ".gitignore", Action: Skipped}
	path := absPath(dir, ".gitignore")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("scaffold .gitignore: %w", err)
	}
	have := map[string]bool{}
	for _, l := range bytes.Split(old, []byte("\n")) {
		have[string(bytes.TrimSpace(l))] = true
	}
	var add bytes.Buffer
	for _, l := range gitignoreLines {
		if !have[l] {
			add.WriteString(l + "\n")
		}
	}
	if add.Len() == 0 {
		return res, nil
	}
	content := bytes.Clone(old)
	if len(content) > 0 && !bytes.HasSuffix(content, []byte("\n")) {
		content = append(content, '\n')
	}
	if len(content) > 0 {
		content = append(content, '\n')
	}
	content = append(content, gitignoreHeader+"\n"...)
	content = append(content, add.Bytes()...)
	if err := atomicfile.Write(path, content, 0o644); err != nil {
		return res, fmt.Errorf("scaffold .gitignore: %w", err)
	}
	res.Action = Created
	if len(old) > 0 {
		res.Action = Updated
	}
	return res, nil
}

func scaffoldDir(root, rel string) (ScaffoldResult, error) {
	res := ScaffoldResult{Path: rel + "/", Action: Skipped}
	p := absPath(root, rel)
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		return res, nil
	case err == nil:
		return res, fmt.Errorf("scaffold %s: exists and is not a folder", rel)
	case !errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("scaffold %s: %w", rel, err)
	}
	// The history holds every task's body: its folder is the owner's
	// alone, as store.Open would make it.
	perm := fs.FileMode(0o755)
	if rel == workspace.DataDir {
		perm = 0o700
	}
	if err := os.MkdirAll(p, perm); err != nil {
		return res, fmt.Errorf("scaffold %s: %w", rel, err)
	}
	res.Action = Created
	return res, nil
}

// writeFile creates path exclusively, so that a file appearing between a
// check and the write is never clobbered; with force it replaces an existing
// file through a rename, so a reader never sees it half written.
func writeFile(path string, content []byte, force bool) (ScaffoldAction, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, werr := f.Write(content)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return Created, werr
	}
	if !errors.Is(err, fs.ErrExist) {
		return Skipped, err
	}
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		return Skipped, fmt.Errorf("exists and is a folder")
	}
	if !force {
		return Skipped, nil
	}
	// A configuration file is not secret: 0644, as an editor would leave it.
	if err := atomicfile.Write(path, content, 0o644); err != nil {
		return Skipped, err
	}
	return Overwritten, nil
}

// DefaultFile returns an embedded default configuration file ("settings.yaml",
// "roles.yaml", "roles-demo.yaml" or "policy.yaml") in a language ("" means
// English), so a command can show or diff the defaults without writing a
// workspace.
func DefaultFile(lang, name string) ([]byte, error) {
	if lang == "" {
		lang = roles.LangEnglish
	}
	at := "defaults/" + lang + "/" + name
	if name == "policy.yaml" {
		at = "defaults/policy.yaml"
	}
	b, err := defaults.ReadFile(at)
	if err != nil {
		return nil, fmt.Errorf("config: default %s/%s: %w", lang, name, err)
	}
	return bytes.Clone(b), nil
}
