//go:build !windows

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

// shogunEnv runs the binary with env added and returns stdout, stderr and
// the exit code.
func shogunEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var out, errOut shoguntest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run shogun %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// setUI rewrites one key of the ui: section of the workspace's settings.
func setUI(t *testing.T, ws, key, value string) {
	t.Helper()
	path := filepath.Join(ws, "config", "settings.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  ` + key + `: .*$`)
	if !re.Match(b) {
		t.Fatalf("no ui.%s in %s", key, path)
	}
	if err := os.WriteFile(path, re.ReplaceAll(b, []byte("  "+key+": "+value)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startCaptured starts the supervisor of ws with its stdout and stderr in
// one buffer; it is killed at the end of the test.
func startCaptured(t *testing.T, ws string) *shoguntest.Buffer {
	t.Helper()
	cmd := exec.Command(bin, "start", "--workspace", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out := &shoguntest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	return out
}

// A second team whose ui.port another program holds gets a console on a
// free port, says which, and shogun ui finds it there. Without a browser,
// shogun ui says so, prints the link, that it works once within a minute,
// and the ssh line that reaches the console from another machine; an
// opener that fails is waited for and quoted.
func TestUIFindsTheConsoleAndSaysWhenNoBrowserOpened(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port

	ws := teamWorkspace(t, simEntry("ashigaru1"))
	setUI(t, ws, "port", fmt.Sprint(port))
	out := startCaptured(t, ws)
	moved := regexp.MustCompile(fmt.Sprintf(`web console: http://localhost:(\d+)/ \(ui.port %d is in use by another program, so it took port (\d+);`, port))
	var got []string
	shoguntest.WaitFor(t, "the console's address", 60*time.Second, func() bool {
		got = moved.FindStringSubmatch(out.String())
		return got != nil
	})
	if got[1] != got[2] || got[1] == fmt.Sprint(port) {
		t.Fatalf("the console says it took port %s but listens at %s (ui.port %d):\n%s", got[2], got[1], port, out)
	}
	free := got[1]

	noDisplay := []string{"DISPLAY=", "WAYLAND_DISPLAY="}
	link, errOut, code := shogunEnv(t, noDisplay, "ui", "-w", ws)
	if code != 0 || !strings.HasPrefix(link, "http://localhost:"+free+"/login?code=") {
		t.Fatalf("shogun ui without a display: exit %d, stdout %q, stderr %q; want the link to port %s", code, link, errOut, free)
	}
	for _, want := range []string{
		"no browser opened (no display: DISPLAY and WAYLAND_DISPLAY are not set)",
		"it works once, within a minute",
		fmt.Sprintf("ssh -N -L %s:localhost:%s ", free, free),
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("shogun ui without a display does not say %q:\n%s", want, errOut)
		}
	}
	if resp, err := browserClient(t).Get(strings.TrimSpace(link)); err != nil || resp.StatusCode != 200 {
		t.Errorf("the printed link does not log in: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A display, but an opener that fails as xdg-open does on a server.
	dir := t.TempDir()
	opener := "#!/bin/sh\necho 'xdg-open: no method available for opening x' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(opener), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"DISPLAY=:99", "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
	if _, errOut, code = shogunEnv(t, env, "ui", "-w", ws); code != 0 || !strings.Contains(errOut, "no browser opened (xdg-open: xdg-open: no method available for opening x)") {
		t.Errorf("shogun ui with a failing xdg-open: exit %d, stderr:\n%s", code, errOut)
	}
}

// shogun ui says why the console is not running: turned off, or the
// reason the start could not serve it.
func TestUISaysWhyThereIsNoConsole(t *testing.T) {
	for _, c := range []struct {
		key, value, want string
	}{
		{"enabled", "false", "shogun: the web console is not running: it is off: ui.enabled: false in config/settings.yaml\n"},
		{"host", `"0.0.0.0"`, `shogun: the web console is not running: it could not start: console: ui.host "0.0.0.0" is not a loopback address`},
	} {
		t.Run(c.key, func(t *testing.T) {
			ws := teamWorkspace(t, simEntry("ashigaru1"))
			setUI(t, ws, c.key, c.value)
			startCaptured(t, ws)
			waitStatus(t, ws, "the supervisor", func(control.StatusReply) bool { return true })
			shoguntest.WaitFor(t, "the console's state", 30*time.Second, func() bool {
				_, err := os.Stat(workspace.New(ws).UIState())
				return err == nil
			})
			_, errOut, code := shogun(t, "ui", "--no-open", "-w", ws)
			if code != 1 || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("shogun ui: exit %d, stderr %q; want exit 1 and one line starting %q", code, errOut, c.want)
			}
		})
	}
}
