package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CLI is one AI coding CLI pinned to the version whose screens the presets
// in roles/preset.go were written from.
type CLI struct {
	// Name is the preset's name (roles.CLIClaude …) and the executable's.
	Name string
	// Package and Version are what npm installs.
	Package, Version string
	// IgnoreScripts installs without running the package's install scripts.
	// Gemini CLI's are for optional native modules (node-pty, keytar) that
	// node-gyp builds, and node-gyp fetches Node's headers from the network
	// unless npm's nodedir points at them; Gemini CLI falls back to the
	// prebuilt @lydell/node-pty it also ships. Claude Code's postinstall
	// must run: it only links the platform binary out of an optional
	// dependency (no download) over a stub.
	IgnoreScripts bool
}

// pinned are the versions of issue 8 ("Typing truth with the real CLIs").
// Changing one means `make fixtures` again and a look at the presets.
var pinned = []CLI{
	{Name: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.197"},
	{Name: "codex", Package: "@openai/codex", Version: "0.169.0"},
	{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0", IgnoreScripts: true},
	{Name: "copilot", Package: "@github/copilot", Version: "1.0.102"},
}

// lookupCLI returns the pinned CLI with the given name.
func lookupCLI(name string) (CLI, bool) {
	for _, c := range pinned {
		if c.Name == name {
			return c, true
		}
	}
	return CLI{}, false
}

// cacheDir is where the CLIs are installed: $SHOGUN_REALCLI_CACHE, else
// shogun-realcli in the user's cache folder ($XDG_CACHE_HOME or ~/.cache).
func cacheDir() (string, error) {
	if d := os.Getenv("SHOGUN_REALCLI_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache folder (set SHOGUN_REALCLI_CACHE): %w", err)
	}
	return filepath.Join(base, "shogun-realcli"), nil
}

// Dir is the CLI's install prefix in the cache: <cache>/<package>@<version>.
func (c CLI) Dir(cache string) string {
	return filepath.Join(cache, filepath.FromSlash(c.Package)+"@"+c.Version)
}

// Path is the CLI's executable in the cache.
func (c CLI) Path(cache string) string {
	return filepath.Join(c.Dir(cache), "node_modules", ".bin", c.Name)
}

// installed reports whether the cache holds this exact version: the
// package's own package.json names it and the executable is there.
func (c CLI) installed(cache string) bool {
	b, err := os.ReadFile(filepath.Join(c.Dir(cache), "node_modules", filepath.FromSlash(c.Package), "package.json"))
	if err != nil {
		return false
	}
	var pkg struct{ Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Version != c.Version {
		return false
	}
	_, err = os.Stat(c.Path(cache))
	return err == nil
}

// Install puts the pinned version into the cache unless it is there. npm
// installs into a fresh folder that is renamed into place only when it
// succeeded, so an interrupted install never looks complete. It returns
// whether it installed anything.
func (c CLI) Install(cache string, log func(format string, args ...any)) (bool, error) {
	if c.installed(cache) {
		return false, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return false, fmt.Errorf("install %s: npm not found (Debian: apt-get install nodejs npm): %w", c.Package, err)
	}
	dir := c.Dir(cache)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return false, fmt.Errorf("install %s: %w", c.Package, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
	if err != nil {
		return false, fmt.Errorf("install %s: %w", c.Package, err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp}
	if c.IgnoreScripts {
		args = append(args, "--ignore-scripts")
	}
	args = append(args, c.Package+"@"+c.Version)
	log("npm %s", strings.Join(args, " "))
	start := time.Now()
	var out bytes.Buffer
	cmd := exec.Command("npm", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("install %s@%s: npm: %w\n%s", c.Package, c.Version, err, out.Bytes())
	}
	if err := c.check(tmp); err != nil {
		return false, fmt.Errorf("install %s@%s: %w\nnpm said:\n%s", c.Package, c.Version, err, out.Bytes())
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("install %s: %w", c.Package, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, fmt.Errorf("install %s: %w", c.Package, err)
	}
	log("installed %s@%s in %s (%.1fs)", c.Package, c.Version, dir, time.Since(start).Seconds())
	return true, nil
}

// check runs the freshly installed executable with --version, in a
// throwaway home, and wants the pinned version in what it prints: a stub
// left by a skipped postinstall, or a binary for another platform, fails
// here rather than in the middle of a test.
func (c CLI) check(prefix string) error {
	home, err := os.MkdirTemp("", "shogun-realcli-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	exe := filepath.Join(prefix, "node_modules", ".bin", c.Name)
	cmd := exec.Command(exe, "--version")
	cmd.Env = append(baseEnv(home, home), "CODEX_HOME="+filepath.Join(home, ".codex"))
	cmd.Dir = home
	out, err := runWithin(cmd, 60*time.Second)
	if err != nil {
		return fmt.Errorf("%s --version: %w\n%s", c.Name, err, out)
	}
	if !bytes.Contains(out, []byte(c.Version)) {
		return fmt.Errorf("%s --version printed %q, want version %s", c.Name, bytes.TrimSpace(out), c.Version)
	}
	return nil
}

// runWithin runs cmd and kills it if it takes longer than d.
func runWithin(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.Bytes(), errors.New("timed out after " + d.String())
	}
}

// installAll installs every pinned CLI (or the named ones) into the cache.
func installAll(cache string, names []string, log func(string, ...any)) error {
	var errs []error
	for _, c := range pinned {
		if len(names) > 0 && !contains(names, c.Name) {
			continue
		}
		did, err := c.Install(cache, log)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !did {
			log("%s@%s already in %s", c.Package, c.Version, c.Dir(cache))
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
