package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/policy"
)

const policyRoles = `roles:
  - id: dev
    prompt_path: roles/dev.md
    command: {exec: claude}
`

// The policy `shogun init` writes lets an unattended team work: every
// route to a role's own report and ordinary work in its folder are
// allowed, the network, files outside and what cannot be undone are
// asked, and what enforces the policy is denied through every tool and
// the shell, however the command is written.
func TestDefaultPolicyDecides(t *testing.T) {
	dir := t.TempDir()
	if _, err := Scaffold(dir, ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	if cfg.Policy == nil {
		t.Fatal("the default workspace has no policy")
	}
	if cfg.Settings.Approvals.Timeout != 2*time.Minute {
		t.Errorf("approvals.timeout = %v, want 2m", cfg.Settings.Approvals.Timeout)
	}
	// The plain force pushes reach Codex's and Gemini CLI's own rules.
	for file, n := range map[string]int{string(GeminiPolicy(cfg.Policy)): strings.Count(string(GeminiPolicy(cfg.Policy)), "[[rule]]"),
		string(CodexRules(cfg.Policy)): strings.Count(string(CodexRules(cfg.Policy)), "prefix_rule(")} {
		if n != 3 {
			t.Errorf("%d native rules, want 3 (git push --force, -f, --mirror):\n%s", n, file)
		}
	}
	ws := cfg.Workspace
	home := t.TempDir()
	for _, d := range []string{"src", "worktrees/ashigaru1/src", "runtime/state", "data"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "runtime", "state", "ui.token"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := policy.Place{Dir: ws, Workspace: ws, OnBaseBranch: true, Home: home}
	wt := policy.Place{Dir: filepath.Join(ws, "worktrees", "ashigaru1"), Workspace: ws, Home: home}
	reports := filepath.Join(ws, "runtime", "queue", "reports")
	type action = policy.Action
	sh := func(c string) action { return action{Kind: policy.Shell, Command: c} }
	read := func(p string) action { return action{Kind: policy.Read, Path: p} }
	write := func(p string) action { return action{Kind: policy.Write, Path: p} }
	const (
		allow, ask, deny = policy.Allow, policy.Ask, policy.Deny
	)
	for _, tc := range []struct {
		place policy.Place
		a     action
		want  policy.Decision
	}{
		// Every route to the role's own report, from the workspace and
		// from a worktree.
		{root, write("runtime/queue/reports/ashigaru1.yaml"), allow},
		{root, write("runtime/queue/reports/ashigaru1.tmp"), allow},
		{wt, write(filepath.Join(reports, "ashigaru1.yaml")), allow},
		{root, sh("cat > runtime/queue/reports/ashigaru1.yaml <<'EOF'\nstatus: done\nEOF"), allow},
		{root, sh("cat > runtime/queue/reports/ashigaru1.tmp <<'EOF'\nstatus: done\nEOF\nmv runtime/queue/reports/ashigaru1.tmp runtime/queue/reports/ashigaru1.yaml"), allow},
		{root, sh("cd runtime/queue/reports && mv ashigaru1.tmp ashigaru1.yaml"), allow},
		{root, sh("echo 'status: done' > runtime/queue/reports/ashigaru1.yaml"), allow},
		{wt, sh("cat > " + filepath.Join(reports, "ashigaru1.tmp") + " <<'EOF'\nstatus: done\nEOF"), allow},
		{wt, sh("cd " + reports + " && mv ashigaru1.tmp ashigaru1.yaml"), allow},
		{wt, sh("cp report.yaml " + filepath.Join(reports, "ashigaru1.yaml")), allow},
		{root, read("runtime/queue/tasks/ashigaru1.yaml"), allow},
		{root, sh("cat runtime/queue/tasks/ashigaru1.yaml"), allow},
		{wt, sh("cat " + filepath.Join(ws, "runtime/queue/tasks/ashigaru1.yaml")), allow},
		{root, write("runtime/queue/commands/next.yaml"), allow},
		{root, action{Kind: policy.MCP, Tool: "shogun/report"}, allow},
		// Not another role's files, nor the supervisor's.
		{root, write("runtime/queue/reports/karo.yaml"), deny},
		{root, write("runtime/queue/tasks/ashigaru1.yaml"), deny},
		{root, sh("cp x runtime/queue/reports/karo.yaml"), deny},
		{root, sh("echo x > runtime/queue/tasks/karo.yaml"), deny},
		{wt, sh("mv x " + filepath.ToSlash(filepath.Join(reports, "karo.yaml"))), deny}, // a shell line takes \ as an escape: Windows paths with /
		// Ordinary work in the folder.
		{root, read("src/main.go"), allow},
		{root, write(filepath.Join(ws, "src/main.go")), allow},
		{wt, write("src/main.go"), allow},
		{root, sh("go build ./... && go test -race ./..."), allow},
		{wt, sh("make"), allow},
		{wt, sh("make test 2>&1 | tail -20"), allow},
		{root, sh("npm test"), allow},
		{root, sh("gofmt -l . && go vet ./..."), allow},
		{root, sh("git status && git diff && git log --oneline -5"), allow},
		{wt, sh("git add -A && git commit -m 'fix: the parser'"), allow},
		{wt, sh("git checkout -b feature"), allow},
		{root, sh("git config user.name x"), allow},
		{root, sh("rm -rf build && mkdir -p build && cp src/main.go build/"), allow},
		{root, sh("grep -rn TODO src 2>/dev/null | head"), allow},
		{root, sh("sed -i s/a/b/ src/main.go"), allow},
		{wt, sh("ls"), allow},
		{wt, sh("timeout 60 go test ./..."), allow},
		{wt, sh("bash -lc 'go build ./... && go test ./...'"), allow},
		{root, sh("find . -name '*.go' -exec gofmt -l {} +"), allow},
		{root, sh("if make; then echo ok; fi"), allow},
		// Asked: outside the folder, the network, what throws work away.
		{root, read("/etc/hosts"), ask},
		{root, write("/etc/hosts"), ask},
		{wt, write("../ashigaru2/x.go"), ask},
		{root, sh("cat /etc/passwd"), ask},
		{root, sh("cat src/main.go /root/.ssh/id_rsa"), ask},
		{wt, sh("cd /tmp && make"), ask},
		{root, sh("git push origin main"), ask},
		{root, sh("git pull"), ask},
		{root, sh("curl -s https://example.com/x"), ask},
		{root, sh("npm install left-pad"), ask},
		{root, sh("go get example.com/x"), ask},
		{wt, sh("git reset --hard HEAD~1"), ask},
		{wt, sh("git reset --har HEAD~1"), ask},
		{wt, sh("git clean -fdx"), ask},
		{root, sh("sudo make install"), ask},
		{root, sh("python3 check.py"), ask},
		{root, sh("bash -c 'python3 x.py'"), ask},
		{root, sh("git init sub"), ask},
		{root, sh("echo 'git push -f' | sh"), ask},
		{root, action{Kind: policy.Fetch, URL: "https://example.com"}, ask},
		{root, action{Kind: policy.MCP, Tool: "github/create_pr"}, ask},
		// Never: what cannot be undone and reaches others.
		{root, sh("rm -rf ~/src"), deny},
		{root, sh("git push --force origin main"), deny},
		{root, sh("git push -fq"), deny},
		{root, sh("git push origin +main"), deny},
		{root, sh("sudo -u root git push --forc"), deny},
		{root, sh("git -c alias.p='!git push -f' p"), deny},
		{root, sh("git reset --hard HEAD~3"), deny},
		{root, sh("git config alias.x '!sh -c x'"), deny},
		{root, sh("git config --global core.hooksPath /tmp/h"), deny},
		// The guards, through every tool.
		{root, write(".claude/settings.json"), deny},
		{root, write(".claude/settings.local.json"), deny},
		{wt, write(".claude/settings.local.json"), deny},
		{root, write(filepath.Join(home, ".claude/settings.json")), deny},
		{root, write(".mcp.json"), deny},
		{root, write(".codex/config.toml"), deny},
		{root, write(".codex/rules/mine.rules"), deny},
		{root, write(".gemini/settings.json"), deny},
		{root, write(".gemini/shogun-policy.toml"), deny},
		{root, write("data/shogun.db"), deny},
		{root, write("roles/ashigaru.md"), deny},
		{root, write("config/policy.yaml"), deny},
		{wt, write("../../config/policy.yaml"), deny},
		{root, write("runtime/state/status.yaml"), deny},
		{root, write(".git/config"), deny},
		{wt, write(".git"), deny},
		{root, read("runtime/state/ui.token"), deny},
		{root, read("runtime/state/ui.sessions"), deny},
		{root, read("runtime/state"), deny},
		{root, read("data/shogun.db"), deny},
		{root, read("roles/ashigaru.md"), allow},
		{root, read("config/roles.yaml"), allow},
		// And through the shell, disguises included.
		{root, sh("echo '# was here' >> config/policy.yaml"), deny},
		{root, sh(`echo '{"disableAllHooks": true}' > .claude/settings.local.json`), deny},
		{root, sh(`git -c alias.x='!echo {} > .claude/settings.local.json' x`), deny},
		{root, sh("cat runtime/state/ui.token"), deny},
		{root, sh(`$'\x63at' runtime/state/ui.token`), deny},
		{root, sh("cat runtime/*/ui.token"), deny},
		{root, sh("sqlite3 data/shogun.db .dump"), deny},
		{root, sh("cat conf*/policy.yaml"), deny},
		{root, sh("cat {config,x}/policy.yaml"), deny},
		{root, sh("tee .mcp.json < x"), deny},
		{root, sh("sed -i s/x/y/ roles/ashigaru.md"), deny},
		{root, sh("dd if=x of=config/policy.yaml"), deny},
		{root, sh("cp x --target-directory=config"), deny},
		{root, sh("mv x .codex/rules/"), deny},
		{root, sh("bash <<< 'echo x >> config/policy.yaml'"), deny},
		{root, sh("find .gemini -delete"), deny},
		{root, sh("env -u HOME sh -c 'cp x .gemini/settings.json'"), deny},
		{wt, sh("echo x >> ../../config/policy.yaml"), deny},
		{root, sh("cp roles/karo.md /etc/cron.d/x"), deny},
		// An awk program that runs a command is a shell in disguise.
		{root, sh(`awk 'BEGIN{system("cp /dev/null roles/ashigaru.md")}'`), ask},
		{root, sh(`awk 'BEGIN{print "x" > "config/policy.yaml"}'`), ask},
		{root, sh(`awk '{print $1}' src/main.go`), allow},
	} {
		where := "root"
		if tc.place.Dir != ws {
			where = "worktree"
		}
		if v := cfg.Policy.Decide("ashigaru1", tc.place, tc.a); v.Decision != tc.want {
			t.Errorf("%s: %s %q = %s (%s), want %s", where, tc.a.Kind, tc.a.Subject(), v.Decision, v.Reason, tc.want)
		}
	}
}

// policy.yaml is read as strictly as the other files: every problem at
// once, each with file, line and column.
func TestPolicyFileIsStrict(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"config/roles.yaml": policyRoles,
		"roles/dev.md":      "x",
		"config/policy.yaml": `default: maybe
role_defaults:
  Dev!: allow
rules:
  - decision: allow
    kind: shell
    comand: "ls"
  - decision: deny
    kind: write
    host: "*.example"
  - decision: allow
    kind: telnet
  - kind: read
  - decision: deny
    kind: read
    path: "../x"
  - decision: allow
    kind: shell
    command: ""
extra: 1
`,
	})
	_, err := Load(dir, env(nil))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load = %v, want *Errors", err)
	}
	want := []string{
		`config/policy.yaml:1:10: "default" must be one of allow, ask, deny; got "maybe"`,
		`config/policy.yaml:3:3: "Dev!" is not a role id`,
		`config/policy.yaml:7:5: unknown key "comand" in policy rule (did you mean "command"?)`,
		`config/policy.yaml:10:11: "host" does not apply to kind write`,
		`config/policy.yaml:12:11: "kind" must be one of shell, read, write, fetch, mcp; got "telnet"`,
		`config/policy.yaml:13:5: missing required key "decision" in policy rule`,
		`config/policy.yaml:16:11: "path": path pattern "../x"`,
		`config/policy.yaml:19:14: "command" must not be empty`,
		`config/policy.yaml:20:1: unknown key "extra" in policy file`,
	}
	if len(errs.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(errs.List), len(want), err)
	}
	for i, w := range want {
		if i >= len(errs.List) || !strings.HasPrefix(errs.List[i].Error(), w) {
			t.Errorf("problem %d = %q, want it to start with %q", i+1, at(errs.List, i), w)
		}
	}
}

func at(list []Error, i int) string {
	if i < len(list) {
		return list[i].Error()
	}
	return ""
}

// A workspace made before approvals has no policy.yaml: no policy, and a
// role named in the policy that roles.yaml lacks is a warning, not an
// error.
func TestPolicyAbsentAndUnknownRoles(t *testing.T) {
	dir := testWorkspace(t, map[string]string{"config/roles.yaml": policyRoles, "roles/dev.md": "x"})
	if cfg := mustLoad(t, dir, nil); cfg.Policy != nil {
		t.Errorf("no policy.yaml: Policy = %+v, want nil", cfg.Policy)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "policy.yaml"), []byte("role_defaults: {qa: deny}\nrules:\n  - {decision: allow, kind: mcp, tool: x/*, roles: [dev, qa]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	if len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0].Error(), `role "qa" is not in config/roles.yaml`) {
		t.Errorf("warnings = %v, want two about qa", cfg.Warnings)
	}
	if cfg.Policy.RoleDefaults["qa"] != policy.Deny || len(cfg.Policy.Rules) != 1 || cfg.Policy.Rules[0].Where != "config/policy.yaml:3" {
		t.Errorf("policy = %+v", cfg.Policy)
	}
}
