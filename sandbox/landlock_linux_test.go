package sandbox_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/sandbox"
)

// helperEnv makes the test binary, started again by a test, apply a
// sandbox and try what the test asks (see TestMain).
const helperEnv = "SHOGUN_SANDBOX_TEST_HELPER"

// TestMain runs the helper when the test binary was started as one: it
// confines itself with a Spec that writes only a temporary folder, opens
// each path named in its arguments for writing and prints one line per
// path, "ok" or the error.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	args := os.Args[1:]
	if err := (sandbox.Spec{Write: []string{os.Getenv(helperEnv)}}).Apply(); err != nil {
		fmt.Fprintln(os.Stderr, "apply:", err)
		os.Exit(2)
	}
	var out strings.Builder
	for _, p := range args {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			fmt.Fprintf(&out, "%s: %v\n", p, err)
			continue
		}
		f.Close()
		fmt.Fprintf(&out, "%s: ok\n", p)
	}
	if err := os.WriteFile(filepath.Join(os.Getenv(helperEnv), "result"), []byte(out.String()), 0o600); err != nil {
		os.Exit(3)
	}
	os.Exit(0)
}

// A sandboxed role runs in its own terminal and may open it again (a
// program reopening its tty), but not another terminal of the same user:
// text written onto another role's terminal would be read as that role's
// screen. Two real PTYs; the helper runs in one under Landlock.
func TestSandboxedRoleOpensOnlyItsOwnTerminal(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	ownMaster, own, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ownMaster.Close()
	defer own.Close()
	otherMaster, other, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer otherMaster.Close()
	defer other.Close()
	go func() { _, _ = io.Copy(io.Discard, ownMaster) }() // ends at Close

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], own.Name(), other.Name())
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = own, own, own
	if err := cmd.Run(); err != nil {
		t.Fatalf("the sandboxed helper: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "result"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.Contains(got, own.Name()+": ok") {
		t.Errorf("the sandboxed process could not open its own terminal %s:\n%s", own.Name(), got)
	}
	if !strings.Contains(got, other.Name()+": open "+other.Name()+": permission denied") {
		t.Errorf("the sandboxed process opened another terminal %s; want permission denied:\n%s", other.Name(), got)
	}
}
