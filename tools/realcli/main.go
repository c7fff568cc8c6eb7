// Command realcli installs the real AI coding CLIs that shogun's presets are
// written for, at pinned versions, and records their screens offline as raw
// PTY captures for supervisor/screens_test.go.
//
//	go run ./tools/realcli install [cli ...]     npm install into the cache
//	go run ./tools/realcli fixtures [-run REGEXP] [cli ...]
//	                                             install, then record (only the
//	                                             scenarios whose name matches)
//	go run ./tools/realcli path CLI              print a CLI's executable
//	go run ./tools/realcli setup -model URL -home DIR -project DIR CLI
//	                                             set up a throwaway home for a
//	                                             CLI that talks to a fake model
//	                                             (tools/fakemodel) and print its
//	                                             environment, one VAR=value a line
//	go run ./tools/realcli tour [-dir DIR] [-addr ADDR] [-force] [cli ...]
//	                                             the scripted model in the foreground
//	                                             and a workspace whose roles use it:
//	                                             a team of real CLIs without an account
//
// The cache is $SHOGUN_REALCLI_CACHE, else ~/.cache/shogun-realcli. Every
// run of a CLI gets a throwaway HOME set up offline (offline.go); nothing is
// ever answered in a CLI's dialogs, since a CLI saves such an answer. The
// live test of the supervisor with these CLIs is live_test.go, behind the
// realcli build tag (`make test-real`).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "realcli:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: realcli install|fixtures|path|setup|tour [flags] [cli ...]")
	}
	fs := flag.NewFlagSet("realcli "+args[0], flag.ContinueOnError)
	out := fs.String("out", "supervisor/testdata/screens", "fixtures: folder for the captures and index.yaml")
	traceDir := fs.String("trace", "", "fixtures: write every distinct screen of each run, with times, into this folder")
	par := fs.Int("p", 4, "fixtures: scenarios run at once")
	only := fs.String("run", "", "fixtures: record only the scenarios whose name matches this regexp (claude-limit, codex-permission, …)")
	model := fs.String("model", "", "setup: the fake model's base URL (http://127.0.0.1:PORT)")
	home := fs.String("home", "", "setup: the throwaway home to set up")
	project := fs.String("project", "", "setup: the project folder the CLI will run in")
	tourDir := fs.String("dir", filepath.Join(os.TempDir(), "shogun-tour"), "tour: the workspace to set up")
	tourAddr := fs.String("addr", "127.0.0.1:8787", "tour: where the scripted model listens (loopback only)")
	tourForce := fs.Bool("force", false, "tour: replace a config/roles.yaml in -dir that the tour did not write")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	names := fs.Args()
	for _, n := range names {
		if _, ok := lookupCLI(n); !ok {
			return fmt.Errorf("unknown CLI %q (want claude, codex, gemini or copilot)", n)
		}
	}
	cache, err := cacheDir()
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "realcli: "+format+"\n", a...)
	}
	start := time.Now()
	switch args[0] {
	case "install":
		err = installAll(cache, names, logf)
	case "fixtures":
		if err = installAll(cache, names, logf); err != nil {
			return err
		}
		if *traceDir != "" {
			if err := os.MkdirAll(*traceDir, 0o755); err != nil {
				return err
			}
		}
		var re *regexp.Regexp
		if *only != "" {
			if re, err = regexp.Compile(*only); err != nil {
				return fmt.Errorf("fixtures -run: %w", err)
			}
		}
		err = recordAll(cache, *out, *traceDir, names, re, *par, logf)
	case "path":
		if len(names) != 1 {
			return fmt.Errorf("path: name one CLI")
		}
		c, _ := lookupCLI(names[0])
		fmt.Println(c.Path(cache))
		return nil
	case "setup":
		if len(names) != 1 || *home == "" || *project == "" {
			return fmt.Errorf("setup: name one CLI and set -home and -project")
		}
		c, _ := lookupCLI(names[0])
		s := Ready
		s.Model = *model
		env, err := prepare(c, s, cache, *home, *project)
		if err != nil {
			return err
		}
		for _, kv := range env {
			fmt.Println(kv)
		}
		if args := modelArgs(c, s); len(args) > 0 {
			logf("run %s with: %s", c.Name, strings.Join(args, " "))
		}
		return nil
	case "tour":
		return tour(cache, *tourDir, *tourAddr, *tourForce, names, logf)
	default:
		return fmt.Errorf("unknown command %q (want install, fixtures, path, setup or tour)", args[0])
	}
	logf("%s took %.1fs", args[0], time.Since(start).Seconds())
	return err
}
