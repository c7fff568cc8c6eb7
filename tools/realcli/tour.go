package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/shogun-dev/shogun/tools/fakemodel"
)

// modelRoleEntry is the roles.yaml entry of a role that runs CLI c against
// the scripted model, with env (what prepare returned, plus anything the
// caller adds) as the role's environment. The end-to-end test and the tour
// write their teams with it.
func modelRoleEntry(id string, c CLI, s Setup, cache string, env []string) string {
	return roleEntry(id, c, cache, modelArgs(c, s), env)
}

// roleEntry is the roles.yaml entry of a role that runs CLI c with args
// and env.
func roleEntry(id string, c CLI, cache string, args, env []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - id: %s\n    prompt_path: roles/ashigaru.md\n    cli: %s\n", id, c.Name)
	fmt.Fprintf(&b, "    command:\n      exec: %q\n", c.Path(cache))
	if len(args) > 0 {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = fmt.Sprintf("%q", a)
		}
		fmt.Fprintf(&b, "      args: [%s]\n", strings.Join(q, ", "))
	}
	b.WriteString("      env:\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "        %s: %q\n", k, v)
	}
	return b.String()
}

// tourTask is the example task the tour suggests sending.
const tourTask = `Write hello.txt, then report.
fakemodel: write hello.txt Hello from the scripted model
fakemodel: report done via write hello.txt written
`

// tourHeader starts the roles.yaml the tour writes: a file that starts
// otherwise is someone's own, which the tour does not replace unasked.
const tourHeader = "# Written by `go run ./tools/realcli tour`"

// tourArgs are the arguments the tour's role of CLI c runs with: the
// model's, and for Codex --no-daemon, which every Codex role needs (its
// shared app-server daemon would start every role's MCP servers with the
// environment of the first: docs/worktrees-and-mcp.md).
func tourArgs(c CLI, s Setup) []string {
	args := modelArgs(c, s)
	if c.Name == "codex" {
		args = append(args, "--no-daemon")
	}
	return args
}

// checkTourRoles refuses to let the tour replace the config/roles.yaml
// in dir unless there is none, the tour wrote it (a run before, perhaps
// with other CLIs), or force: a workspace of a person's own keeps its
// team.
func checkTourRoles(dir string, force bool) error {
	path := filepath.Join(dir, "config", "roles.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || force {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if strings.HasPrefix(string(data), tourHeader) {
		return nil
	}
	return fmt.Errorf("%s is not one the tour wrote, and the tour would replace it with its own team: give another -dir, or -force to replace it", path)
}

// tour runs the scripted model on addr in the foreground and sets up a
// workspace in dir whose roles are the named CLIs, each pointed at the
// model from a home of its own, so that a team of real CLIs can be tried
// without an account. It prints what to run in another terminal and serves
// until interrupted.
func tour(cache, dir, addr string, force bool, names []string, logf func(string, ...any)) error {
	if len(names) == 0 {
		names = []string{"claude", "codex", "gemini", "copilot"}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := checkTourRoles(dir, force); err != nil {
		return err
	}
	if err := installAll(cache, names, logf); err != nil {
		return err
	}
	shogun, err := shogunExecutable()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "roles.yaml")); os.IsNotExist(err) {
		if out, err := exec.Command(shogun, "init", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("shogun init %s: %w\n%s", dir, err, out)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	model := &fakemodel.Server{Addr: addr, Log: os.Stderr}
	if err := model.Start(ctx); err != nil {
		return fmt.Errorf("start the scripted model on %s: %w", addr, err)
	}
	defer model.Close()

	var roles strings.Builder
	roles.WriteString(tourHeader + ": each role runs a real CLI against the\n" +
		"# scripted model at " + model.URL() + " (tools/fakemodel), from a home of its own.\nroles:\n")
	for _, name := range names {
		c, _ := lookupCLI(name)
		s := Ready
		s.Model = model.URL()
		env, err := prepare(c, s, cache, filepath.Join(cache, "tour", name), dir)
		if err != nil {
			return err
		}
		roles.WriteString(roleEntry(name, c, cache, tourArgs(c, s), env))
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "roles.yaml"), []byte(roles.String()), 0o644); err != nil {
		return err
	}
	taskFile := filepath.Join(dir, "hello-task.txt")
	if err := os.WriteFile(taskFile, []byte(tourTask), 0o644); err != nil {
		return err
	}
	fmt.Printf(`The scripted model listens on %s; Ctrl-C here stops it.
A team of %s is set up in %s. In another terminal:

  %s start -w %s
  %s send -w %s --to %s --title "Say hello" --body-file %s
  %s tasks -w %s
  %s attach -w %s %s        (Ctrl-] detaches)

The task's "fakemodel:" lines tell the model what to do (go doc ./tools/fakemodel).
`, model.URL(), strings.Join(names, ", "), dir, shogun, dir, shogun, dir, names[0], taskFile, shogun, dir, shogun, dir, names[0])
	<-ctx.Done()
	return nil
}

// shogunExecutable is the shogun on PATH, else the one `make build` left
// in bin/.
func shogunExecutable() (string, error) {
	if p, err := exec.LookPath("shogun"); err == nil {
		return p, nil
	}
	if p, err := filepath.Abs(filepath.Join("bin", "shogun")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no shogun on PATH and no bin/shogun: run make build first")
}
