//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// minBuild is the first Windows build with ConPTY (Windows 10 1809), which
// ptyhost refuses to start without; a fresh Wine prefix reports Windows 7.
const minBuild = 17763

// prefix is a ready Wine prefix.
type prefix struct {
	t   tools
	dir string
}

// env is the environment of every Wine process: this prefix, no debug
// channels (Wine's fixme lines would drown the test output), our ProcessPrng
// before Wine's, no display (console programs need none, and a display set
// by the caller would let Wine open windows), and a UTF-8 locale of its
// own: Wine turns Unix file names into Windows ones by the locale's
// character set, and under C or POSIX (a bare container, a CI runner's
// default) a non-ASCII path cannot be named, which failed ten tests.
func (p prefix) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "WINEPREFIX", k == "WINEDEBUG", k == "WINEDLLOVERRIDES", k == "WINEARCH", k == "DISPLAY", k == "WAYLAND_DISPLAY":
		case k == "LANG", k == "LANGUAGE", strings.HasPrefix(k, "LC_"):
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "WINEPREFIX="+p.dir, "WINEDEBUG=-all", "WINEARCH=win64",
		"WINEDLLOVERRIDES=bcryptprimitives=n,b;mscoree,mshtml=", "LANG=C.UTF-8")
	return append(env, extra...)
}

// command is a Wine process running a Windows program (or a Wine tool
// such as wineboot) in the prefix.
func (p prefix) command(args ...string) *exec.Cmd {
	cmd := exec.Command(p.t.wine, args...)
	cmd.Env = p.env()
	return cmd
}

// shutdown ends every process still running in the prefix (a test's
// leftover child) and the wineserver.
func (p prefix) shutdown() {
	cmd := exec.Command(p.t.wineserver, "-k")
	cmd.Env = p.env()
	_ = cmd.Run()
}

// windowsPath is the path Wine's Z: drive gives a host path.
func windowsPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

// preparePrefix makes a Windows 10 prefix once per Wine version and puts
// the stub DLL into its system32 on every run. A new prefix is made in a
// fresh folder and renamed into place, so a run that is interrupted, or
// one running beside another, never uses a half-made prefix.
func preparePrefix(t tools, cache, dll string) (prefix, error) {
	want := t.version + " win10\n"
	p := prefix{t: t, dir: filepath.Join(cache, "prefix")}
	stamp := func(dir string) string { return filepath.Join(dir, ".shogun-prefix") }
	if b, err := os.ReadFile(stamp(p.dir)); err != nil || string(b) != want {
		fmt.Printf("test-windows: making a Windows 10 prefix for %s (once)\n", t.version)
		tmp, err := os.MkdirTemp(cache, "prefix-new-")
		if err != nil {
			return p, err
		}
		np := prefix{t: t, dir: tmp}
		steps := [][]string{{"wineboot", "-i"}, {"winecfg", "/v", "win10"}}
		for _, args := range steps {
			if b, err := np.command(args...).CombinedOutput(); err != nil {
				os.RemoveAll(tmp)
				return p, fmt.Errorf("wine %s: %w\n%s", strings.Join(args, " "), err, b)
			}
		}
		// The registry reaches the disk when the wineserver exits.
		wait := exec.Command(t.wineserver, "-w")
		wait.Env = np.env()
		_ = wait.Run()
		if err := checkBuild(tmp); err != nil {
			os.RemoveAll(tmp)
			return p, err
		}
		if err := os.WriteFile(stamp(tmp), []byte(want), 0o644); err != nil {
			os.RemoveAll(tmp)
			return p, err
		}
		os.RemoveAll(p.dir)
		if err := os.Rename(tmp, p.dir); err != nil {
			os.RemoveAll(tmp)
			return p, fmt.Errorf("put the new prefix in place: %w", err)
		}
	}
	// What earlier runs' tests left in the Windows temp folder.
	if temps, _ := filepath.Glob(filepath.Join(p.dir, "drive_c", "users", "*", "Temp", "*")); len(temps) > 0 {
		for _, t := range temps {
			os.RemoveAll(t)
		}
	}
	b, err := os.ReadFile(dll)
	if err != nil {
		return p, err
	}
	sys32 := filepath.Join(p.dir, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if err := os.WriteFile(sys32, b, 0o755); err != nil {
		return p, fmt.Errorf("install bcryptprimitives.dll: %w", err)
	}
	return p, nil
}

var buildNumber = regexp.MustCompile(`"CurrentBuildNumber"="(\d+)"`)

// checkBuild reads the Windows build the prefix reports from its registry.
func checkBuild(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "system.reg"))
	if err != nil {
		return fmt.Errorf("read the prefix's registry: %w", err)
	}
	m := buildNumber.FindSubmatch(b)
	if m == nil {
		return fmt.Errorf("the prefix's registry has no CurrentBuildNumber")
	}
	n, _ := strconv.Atoi(string(m[1]))
	if n < minBuild {
		return fmt.Errorf("the prefix reports Windows build %d after winecfg /v win10; ConPTY needs %d", n, minBuild)
	}
	if !bytes.Contains(b, []byte(`"CurrentMajorVersionNumber"=dword:0000000a`)) {
		return fmt.Errorf("the prefix does not report Windows 10 after winecfg /v win10")
	}
	return nil
}
