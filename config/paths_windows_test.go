package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The paths a Windows user's workspace really has: a drive letter, spaces
// ("My Documents"), non-ASCII names, more than MAX_PATH (260) characters,
// network shares, and names that match whatever their case.

const oneRole = `roles:
  - id: karo
    name: "家老"
    prompt_path: "roles/karo.md"
    command: {exec: "codex"}
`

// workspaceAt writes a workspace with one role into dir.
func workspaceAt(t *testing.T, dir string) {
	t.Helper()
	for rel, content := range map[string]string{RolesFile: oneRole, "roles/karo.md": "# karo\n"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadsInPlace loads the workspace at dir and checks that the prompt file
// and the history path resolve inside it and can be read.
func loadsInPlace(t *testing.T, dir string) *Config {
	t.Helper()
	cfg := mustLoad(t, dir, nil)
	r, ok := cfg.Role("karo")
	if !ok {
		t.Fatal("role karo not loaded")
	}
	if b, err := os.ReadFile(r.PromptFile); err != nil || string(b) != "# karo\n" {
		t.Errorf("prompt file %s: %q, %v", r.PromptFile, b, err)
	}
	if !strings.EqualFold(filepath.Dir(filepath.Dir(r.PromptFile)), cfg.Workspace) {
		t.Errorf("prompt file %s is not in the workspace %s", r.PromptFile, cfg.Workspace)
	}
	if db := cfg.Settings.Data.SQLitePath; !strings.HasPrefix(strings.ToLower(db), strings.ToLower(cfg.Workspace)+`\`) {
		t.Errorf("history %s is not in the workspace %s", db, cfg.Workspace)
	}
	if r.Command.Cwd != cfg.Workspace {
		t.Errorf("cwd = %s, want the workspace %s", r.Command.Cwd, cfg.Workspace)
	}
	return cfg
}

func TestWorkspaceWithSpacesAndNonASCIIName(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "My Documents", "将軍 チーム", "über projekt")
	workspaceAt(t, ws)
	cfg := loadsInPlace(t, ws)
	if cfg.Workspace != ws {
		t.Errorf("workspace = %q, want %q", cfg.Workspace, ws)
	}
}

func TestWorkspaceGivenInEveryDriveLetterSpelling(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "team")
	workspaceAt(t, ws)
	vol := filepath.VolumeName(ws)
	if len(vol) != 2 || vol[1] != ':' {
		t.Fatalf("temp folder %s has no drive letter", ws)
	}
	rest := ws[len(vol):]
	for name, spelling := range map[string]string{
		"as is":              ws,
		"forward slashes":    filepath.ToSlash(ws),
		"lower-case drive":   strings.ToLower(vol) + rest,
		"trailing separator": ws + `\`,
		"dot segments":       vol + filepath.Join(rest, "roles") + `\..`,
		"extended-length":    `\\?\` + ws,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := loadsInPlace(t, spelling)
			if !strings.EqualFold(strings.TrimPrefix(cfg.Workspace, `\\?\`), ws) {
				t.Errorf("workspace %q loaded as %q, want %q", spelling, cfg.Workspace, ws)
			}
		})
	}
}

// A workspace deep enough that its files' paths pass MAX_PATH: Windows
// APIs without the \\?\ prefix refuse them; Go adds it.
func TestWorkspaceOverMaxPath(t *testing.T) {
	ws := t.TempDir()
	for len(ws) < 270 {
		ws = filepath.Join(ws, "a folder name of fifty characters, with spaces 0123")
	}
	workspaceAt(t, ws)
	r, _ := loadsInPlace(t, ws).Role("karo")
	if len(r.PromptFile) <= 260 {
		t.Fatalf("prompt file path is %d characters, want over 260", len(r.PromptFile))
	}
}

// A workspace on a network share, reached by its UNC name. Windows reaches
// the local drive as the administrative share \\localhost\C$ (CI runners
// are administrators); where that share is not there (Wine, a locked-down
// machine) the test says so and skips.
func TestWorkspaceOnANetworkShare(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "shared team")
	workspaceAt(t, ws)
	vol := filepath.VolumeName(ws)
	unc := `\\localhost\` + vol[:1] + `$` + ws[len(vol):]
	if _, err := os.Stat(unc); err != nil {
		t.Skipf("the administrative share is not reachable here: %v", err)
	}
	cfg := loadsInPlace(t, unc)
	if !strings.HasPrefix(cfg.Workspace, `\\localhost\`) {
		t.Errorf("workspace %q loaded as %q", unc, cfg.Workspace)
	}
}

// prompt_path stays relative to the workspace: drive letters, UNC names and
// rooted paths are refused, in either slash, whatever the OS.
func TestPromptPathsOutsideTheWorkspaceAreRefused(t *testing.T) {
	for _, p := range []string{`C:\Users\me\roles\karo.md`, `c:/roles/karo.md`, `C:roles\karo.md`,
		`\\server\share\karo.md`, `//server/share/karo.md`, `\roles\karo.md`, `\\?\C:\karo.md`, `roles\..\..\karo.md`} {
		t.Run(p, func(t *testing.T) {
			ws := testWorkspace(t, map[string]string{
				RolesFile:       strings.Replace(oneRole, `"roles/karo.md"`, "'"+p+"'", 1),
				"roles/karo.md": "# karo\n",
			})
			_, err := Load(ws, env(nil))
			if err == nil || !strings.Contains(err.Error(), "prompt_path") {
				t.Fatalf("prompt_path %q: err = %v, want it refused", p, err)
			}
		})
	}
	ws := testWorkspace(t, map[string]string{
		RolesFile:       strings.Replace(oneRole, `"roles/karo.md"`, `'roles\karo.md'`, 1),
		"roles/karo.md": "# karo\n",
	})
	if r, _ := mustLoad(t, ws, nil).Role("karo"); r.PromptPath != "roles/karo.md" {
		t.Errorf("backslashed prompt_path read as %q, want roles/karo.md", r.PromptPath)
	}
}

// Windows file names match whatever their case: a prompt_path written in
// another case than the file on disk names that file and loads, as
// Explorer and every Windows program would find it. (On Linux the same
// roles.yaml is an error naming the missing file.)
func TestPromptPathInAnotherCaseFindsTheFile(t *testing.T) {
	ws := testWorkspace(t, map[string]string{
		RolesFile:       strings.Replace(oneRole, `"roles/karo.md"`, `"ROLES/Karo.MD"`, 1),
		"roles/karo.md": "# karo\n",
	})
	r, _ := mustLoad(t, ws, nil).Role("karo")
	if b, err := os.ReadFile(r.PromptFile); err != nil || string(b) != "# karo\n" {
		t.Errorf("prompt file %s: %q, %v", r.PromptFile, b, err)
	}
}

// Two role files whose names differ only in case are one file on Windows:
// `shogun init` finds a person's roles/KARO.md where it would write
// roles/karo.md and keeps it, never replacing it with the default.
func TestInitKeepsARoleFileThatDiffersOnlyInCase(t *testing.T) {
	ws := testWorkspace(t, map[string]string{"roles/KARO.md": "# my own karo\n"})
	results, err := Scaffold(ws, ScaffoldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Path == "roles/karo.md" && r.Action != Skipped {
			t.Errorf("init %s roles/karo.md over roles/KARO.md", r.Action)
		}
	}
	entries, err := os.ReadDir(filepath.Join(ws, "roles"))
	if err != nil {
		t.Fatal(err)
	}
	var karo []string
	for _, e := range entries {
		if strings.EqualFold(e.Name(), "karo.md") {
			karo = append(karo, e.Name())
		}
	}
	if len(karo) != 1 || karo[0] != "KARO.md" {
		t.Errorf("role files named karo.md in any case: %v, want only the person's KARO.md", karo)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "roles", "karo.md")); string(b) != "# my own karo\n" {
		t.Errorf("roles/karo.md reads %q, want the person's file", b)
	}
	// The default roles.yaml names roles/karo.md: it loads the person's file.
	cfg := mustLoad(t, ws, env(nil))
	if r, ok := cfg.Role("karo"); ok {
		if b, _ := os.ReadFile(r.PromptFile); string(b) != "# my own karo\n" {
			t.Errorf("karo's prompt file reads %q", b)
		}
	}
}
