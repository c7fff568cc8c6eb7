package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/roles"
)

func TestScaffoldMakesAWorkspaceThatLoads(t *testing.T) {
	for _, lang := range []string{"en", "ja", ""} {
		for _, demo := range []bool{false, true} {
			name := lang
			if demo {
				name += "-demo"
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "ws")
				results, err := Scaffold(dir, ScaffoldOptions{Demo: demo, Lang: lang})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range results {
					if r.Action != Created {
						t.Errorf("%s: %s, want created in a new folder", r.Path, r.Action)
					}
					got = append(got, r.Path)
				}
				want := "config/ roles/ config/settings.yaml config/roles.yaml config/policy.yaml roles/shogun.md roles/karo.md roles/ashigaru.md " +
					".mcp.json .claude/settings.json .codex/config.toml .gemini/settings.json .gemini/shogun-policy.toml .codex/rules/shogun.rules " +
					"runtime/queue/commands/ runtime/queue/tasks/ runtime/queue/reports/ runtime/queue/archive/ runtime/queue/failed/ " +
					"runtime/logs/ runtime/state/ data/ skills/codex/ skills/copilot/ .gitignore"
				if strings.Join(got, " ") != want {
					t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(got, " "), want)
				}
				for _, p := range got {
					if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
						t.Error(err)
					}
				}

				// Demo roles start the simulated agent through SHOGUN_EXE,
				// which the supervisor sets.
				cfg := mustLoad(t, dir, env(map[string]string{"SHOGUN_EXE": "/opt/shogun/shogun"}))
				enabled := cfg.Enabled()
				if len(enabled) != 5 {
					t.Fatalf("%d enabled roles, want 5", len(enabled))
				}
				wantLang := lang
				if wantLang == "" {
					wantLang = roles.LangEnglish
				}
				for _, r := range enabled {
					kind := strings.TrimRight(r.ID, "0123456789")
					want, _ := roles.File(wantLang, kind)
					got, err := os.ReadFile(r.PromptFile)
					if err != nil || string(got) != string(want) {
						t.Errorf("%s: prompt file %s is not the %s %s file (%v)", r.ID, r.PromptPath, wantLang, kind, err)
					}
					if demo {
						// The shogun hands work to the karo, the karo to the ashigaru.
						wantArgs := map[string]string{
							"shogun": "agent-sim --delegate karo",
							"karo":   "agent-sim --delegate ashigaru1,ashigaru2,ashigaru3",
						}[r.ID]
						if wantArgs == "" {
							wantArgs = "agent-sim"
						}
						if r.Command.Exec != "/opt/shogun/shogun" || strings.Join(r.Command.Args, " ") != wantArgs || r.CLI != roles.CLIGeneric {
							t.Errorf("%s: demo command %s (%s)", r.ID, r.Command, r.CLI)
						}
						if r.ReadyPattern.String() != "› " || r.BusyPattern.String() != "esc to interrupt" || r.SubmitDelay.Milliseconds() != 100 {
							t.Errorf("%s: demo typing %v %v %v", r.ID, r.ReadyPattern, r.BusyPattern, r.SubmitDelay)
						}
						continue
					}
					wantCLI := roles.CLIClaude
					if r.ID == "shogun" {
						wantCLI = roles.CLICodex
					}
					if r.CLI != wantCLI {
						t.Errorf("%s: CLI %s, want %s", r.ID, r.CLI, wantCLI)
					}
					// Permission-skipping flags stop a role from starting as
					// root; they are documented, never a default. Codex runs
					// without its shared daemon, so that its MCP servers get
					// the role's own environment (SHOGUN_ROLE).
					wantArgs := ""
					if wantCLI == roles.CLICodex {
						wantArgs = "--no-daemon"
					}
					if strings.Join(r.Command.Args, " ") != wantArgs {
						t.Errorf("%s: command %s, want flags %q", r.ID, r.Command, wantArgs)
					}
				}
				if lang == "ja" {
					if r, _ := cfg.Role("ashigaru1"); r.Name != "足軽1" {
						t.Errorf("ja name = %q", r.Name)
					}
				}
			})
		}
	}
}

func TestScaffoldNeverOverwritesWithoutForce(t *testing.T) {
	dir := t.TempDir()
	edited := map[string]string{
		"config/roles.yaml": "roles:\n  - {id: mine, prompt_path: roles/karo.md, command: {exec: bash}}\n",
		"roles/karo.md":     "my own karo\n",
	}
	for rel, content := range edited {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	results, err := Scaffold(dir, ScaffoldOptions{Lang: "ja"})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]ScaffoldAction{}
	for _, r := range results {
		actions[r.Path] = r.Action
	}
	for path, want := range map[string]ScaffoldAction{
		"config/":              Skipped,
		"roles/":               Skipped,
		"config/roles.yaml":    Skipped,
		"roles/karo.md":        Skipped,
		"config/settings.yaml": Created,
		"roles/shogun.md":      Created,
		"runtime/queue/tasks/": Created,
	} {
		if actions[path] != want {
			t.Errorf("%s: %s, want %s", path, actions[path], want)
		}
	}
	for rel, content := range edited {
		if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); string(b) != content {
			t.Errorf("%s was overwritten without Force", rel)
		}
	}
	cfg := mustLoad(t, dir, nil)
	if len(cfg.Roles) != 1 || cfg.Roles[0].ID != "mine" {
		t.Errorf("roles = %+v", cfg.Roles)
	}

	// A second run changes nothing and says so.
	results, err = Scaffold(dir, ScaffoldOptions{Lang: "ja"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Action != Skipped {
			t.Errorf("second run: %s %s", r.Path, r.Action)
		}
	}

	results, err = Scaffold(dir, ScaffoldOptions{Force: true, Lang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		want := Overwritten
		if strings.HasSuffix(r.Path, "/") || r.Path == ".gitignore" {
			want = Skipped // a folder, and lines .gitignore already has
		}
		if r.Action != want {
			t.Errorf("force: %s %s, want %s", r.Path, r.Action, want)
		}
	}
	wantKaro, _ := roles.File("en", roles.KindKaro)
	if b, _ := os.ReadFile(filepath.Join(dir, "roles", "karo.md")); string(b) != string(wantKaro) {
		t.Error("Force did not overwrite roles/karo.md")
	}
	wantRoles, _ := DefaultFile("en", "roles.yaml")
	if b, _ := os.ReadFile(filepath.Join(dir, "config", "roles.yaml")); string(b) != string(wantRoles) {
		t.Error("Force did not overwrite config/roles.yaml")
	}
	fi, err := os.Stat(filepath.Join(dir, "config", "roles.yaml"))
	if err != nil || fi.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("overwritten file mode %v, %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "config"))
	if len(entries) != 3 {
		t.Errorf("config/ holds %d entries, want 3 (no temp files left)", len(entries))
	}
	mustLoad(t, dir, nil)
}

func TestScaffoldRejectsBadInput(t *testing.T) {
	if _, err := Scaffold(t.TempDir(), ScaffoldOptions{Lang: "fr"}); err == nil || !strings.Contains(err.Error(), `"fr"`) {
		t.Errorf("Lang fr: err = %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "runtime"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := Scaffold(dir, ScaffoldOptions{})
	if err == nil || !strings.Contains(err.Error(), "runtime/queue/commands") {
		t.Errorf("runtime is a file: err = %v", err)
	}
	if len(results) != 14 {
		t.Errorf("results before the error = %d, want the 14 done", len(results))
	}
}

func TestScaffoldActionString(t *testing.T) {
	for a, want := range map[ScaffoldAction]string{Created: "created", Skipped: "skipped", Overwritten: "overwritten", 9: "ScaffoldAction(9)"} {
		if a.String() != want {
			t.Errorf("%d: %q", int(a), a.String())
		}
	}
}

func TestDefaultsFolderIsComplete(t *testing.T) {
	for _, lang := range roles.Languages() {
		for _, name := range []string{"settings.yaml", "roles.yaml", "roles-demo.yaml"} {
			if b, err := DefaultFile(lang, name); err != nil || len(b) == 0 {
				t.Errorf("DefaultFile(%s, %s): %v", lang, name, err)
			}
		}
	}
	if _, err := DefaultFile("en", "nope.yaml"); err == nil {
		t.Error("DefaultFile(nope.yaml) succeeded")
	}
}

// init keeps a repository from taking the console's token, the history and
// the logs, adding to a .gitignore a person wrote and leaving their lines;
// the files start rewrites are written as start writes them, so that a
// committed workspace shows no change after its first start.
func TestScaffoldIgnoresStateAndWritesWhatStartWrites(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n/data/"), 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := Scaffold(dir, ScaffoldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := results[len(results)-1]; r.Path != ".gitignore" || r.Action != Updated {
		t.Errorf("last result %+v, want .gitignore updated", r)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	want := "node_modules/\n/data/\n\n" + gitignoreHeader + "\n/runtime/state/\n/runtime/logs/\n/runtime/queue/archive/\n/runtime/queue/failed/\n/runtime/dashboard.md\n"
	if string(b) != want {
		t.Errorf(".gitignore =\n%s\nwant\n%s", b, want)
	}
	again, err := Scaffold(dir, ScaffoldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := again[len(again)-1]; r.Action != Skipped {
		t.Errorf("second init: .gitignore %s, want skipped", r.Action)
	}
	cfg := mustLoad(t, dir, nil)
	for _, f := range []struct {
		rel  string
		want []byte
	}{{GeminiPolicyFile, GeminiPolicy(cfg.Policy)}, {CodexRulesFile, CodexRules(cfg.Policy)}} {
		if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.rel))); string(b) != string(f.want) {
			t.Errorf("%s as init wrote it differs from what start writes:\n%s", f.rel, b)
		}
	}
}

// The settings.yaml that init writes says every key is shown: the keys of
// sleeping roles and of the caps on running CLIs are there too, commented
// out with their defaults, and uncommented they load as those defaults.
func TestScaffoldSettingsShowTheSleepAndCapKeys(t *testing.T) {
	keys := []string{"idle_after", "max_running", "max_running_per_cli", "memory_max"}
	for _, lang := range []string{"en", "ja"} {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ws")
			if _, err := Scaffold(dir, ScaffoldOptions{Lang: lang}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "config", "settings.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for _, k := range keys {
				line := "\n  # " + k + ": "
				if !strings.Contains(text, line) {
					t.Errorf("settings.yaml (%s) does not show agent.%s", lang, k)
				}
				text = strings.Replace(text, line, "\n  "+k+": ", 1)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			a := mustLoad(t, dir, nil).Settings.Agent
			if a.IdleAfter != 0 || a.MaxRunning != 0 || len(a.MaxRunningPerCLI) != 0 || a.MemoryMax != 0 {
				t.Errorf("uncommented, the keys load as %+v; want their defaults", a)
			}
		})
	}
}
