//go:build unix

// Command run is `make test-windows`: it runs the Windows build's tests
// under Wine on a Linux machine, so that CI exercises the code paths that
// `make test` only cross-compiles.
//
// It installs Wine and mingw from Debian when they are missing (as root),
// builds tools/wine/bcryptprimitives.c (the ProcessPrng that Go windows
// binaries need and Wine 8 lacks), keeps a Windows 10 prefix under
// $XDG_CACHE_HOME/shogun-wine, cross-compiles the test binary of every
// package, runs each under Wine with a time limit, and prints a table:
// package, result, tests run, passed, failed, skipped, and why tests were
// skipped. It exits non-zero when a package fails, times out or does not
// build.
//
// It is a Linux tool (Wine runs there); on Windows run `go test ./...`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	var o options
	flag.DurationVar(&o.timeout, "timeout", 4*time.Minute, "time limit of one package's tests")
	flag.IntVar(&o.parallel, "parallel", 2, "packages run at once")
	flag.StringVar(&o.run, "run", "", "only tests matching this regexp (-test.run)")
	flag.BoolVar(&o.keep, "keep", false, "keep the test binaries and logs even when everything passed")
	flag.BoolVar(&o.noInstall, "no-install", false, "never run apt-get; fail when Wine or mingw is missing")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/wine/run [flags] [packages] (default ./...)")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.patterns = flag.Args()
	if len(o.patterns) == 0 {
		o.patterns = []string{"./..."}
	}
	start := time.Now()
	ok, counts, err := run(o)
	fmt.Printf("\ntest-windows: %s in %s\n", map[bool]string{true: "passed", false: "FAILED"}[ok && err == nil], time.Since(start).Round(time.Second))
	if counts != "" {
		fmt.Println(counts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-windows:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	timeout   time.Duration
	parallel  int
	run       string
	keep      bool
	noInstall bool
	patterns  []string
}

func run(o options) (ok bool, counts string, err error) {
	root, err := output("go", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return false, "", fmt.Errorf("find the module: %w", err)
	}
	if err := os.Chdir(root); err != nil {
		return false, "", err
	}
	tools, err := findTools(!o.noInstall)
	if err != nil {
		return false, "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return false, "", err
	}
	dll, err := buildStub(tools, cache)
	if err != nil {
		return false, "", err
	}
	wine, err := preparePrefix(tools, cache, dll)
	if err != nil {
		return false, "", err
	}
	defer wine.shutdown()

	work, err := os.MkdirTemp("", "shogun-wine-")
	if err != nil {
		return false, "", err
	}
	pkgs, err := listPackages(o.patterns)
	if err != nil {
		return false, "", err
	}
	results := testAll(o, wine, work, pkgs)
	counts = printSummary(os.Stdout, results)
	ok = allOK(results)
	if ok && !o.keep {
		os.RemoveAll(work)
	} else {
		fmt.Printf("test binaries and logs: %s\n", work)
	}
	return ok, counts, nil
}

// output runs a command and returns its trimmed standard output; its
// standard error becomes part of the error.
func output(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(b)), nil
}

// cacheDir is where the prefix and the stub DLL live between runs.
func cacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cache folder: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(base, "shogun-wine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create cache folder: %w", err)
	}
	return dir, nil
}

// tools are the host programs the harness runs.
type tools struct {
	wine, wineserver, mingw string
	version                 string // "wine-8.0 (Debian 8.0~repack-4)"
}

// debianPackages are what provide the tools on Debian 12 (Wine 8.0).
var debianPackages = []string{"wine64", "gcc-mingw-w64-x86-64"}

func findTools(install bool) (tools, error) {
	t, missing := lookTools()
	if len(missing) > 0 {
		if !install || os.Geteuid() != 0 {
			return t, fmt.Errorf("missing %s: install the Debian packages %s (as root: apt-get install --no-install-recommends %s)",
				strings.Join(missing, ", "), strings.Join(debianPackages, " "), strings.Join(debianPackages, " "))
		}
		fmt.Printf("test-windows: installing %s (missing %s)\n", strings.Join(debianPackages, " "), strings.Join(missing, ", "))
		for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, debianPackages...)} {
			cmd := exec.Command("apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return t, fmt.Errorf("apt-get %s: %w", args[0], err)
			}
		}
		if t, missing = lookTools(); len(missing) > 0 {
			return t, fmt.Errorf("still missing after apt-get: %s", strings.Join(missing, ", "))
		}
	}
	v, err := output(t.wine, "--version")
	if err != nil {
		return t, err
	}
	t.version = v
	return t, nil
}

// lookTools finds Wine where Debian puts it (wine64 is not on PATH unless
// the "wine" wrapper package is installed too) or on PATH.
func lookTools() (tools, []string) {
	var t tools
	var missing []string
	find := func(dst *string, names ...string) {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				*dst = p
				return
			}
		}
		missing = append(missing, names[0])
	}
	find(&t.wine, "wine64", "/usr/lib/wine/wine64", "/usr/lib/wine/wine")
	find(&t.wineserver, "wineserver", "/usr/lib/wine/wineserver64", "/usr/lib/wine/wineserver")
	find(&t.mingw, "x86_64-w64-mingw32-gcc")
	return t, missing
}

// buildStub compiles the ProcessPrng DLL from the repository's source.
func buildStub(t tools, cache string) (string, error) {
	out := filepath.Join(cache, "bcryptprimitives.dll")
	cmd := exec.Command(t.mingw, "-shared", "-O2", "-s", "-Wall", "-Werror", "-o", out,
		filepath.Join("tools", "wine", "bcryptprimitives.c"), filepath.Join("tools", "wine", "bcryptprimitives.def"), "-ladvapi32")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build bcryptprimitives.dll: %w\n%s", err, b)
	}
	return out, nil
}

func allOK(results []result) bool {
	for _, r := range results {
		if !r.ok() {
			return false
		}
	}
	return len(results) > 0
}

// errTimeout marks a package whose tests ran past the time limit.
var errTimeout = errors.New("time limit reached")
