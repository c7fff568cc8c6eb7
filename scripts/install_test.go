package scripts_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testVersion is stamped into the test's release, to be read back from the
// installed binary.
const testVersion = "v0.0.0-installtest"

// buildRelease builds a release of this repository for this machine's
// platform only (the whole set takes minutes), into a new folder, as
// `make release` does where make is, else with tools/release directly.
func buildRelease(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dist := t.TempDir()
	goos := runtime.GOOS + "/" + runtime.GOARCH
	var r result
	if mk, err := exec.LookPath("make"); err == nil && runtime.GOOS != "windows" {
		r = run(t, root, nil, mk, "release", "TARGETS="+goos, "DIST="+dist, "VERSION="+testVersion)
	} else {
		r = run(t, root, nil, "go", "run", "./tools/release", "-targets", goos, "-out", dist, "-version", testVersion)
	}
	if r.code != 0 {
		t.Fatalf("make release: %s", r)
	}
	return dist
}

// copyDir copies the files of a flat folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestInstallSh installs the archives of `make release` with
// scripts/install.sh, as a person would, from a local HTTP server, a folder
// and a file:// URL, and checks that a damaged archive is refused.
func TestInstallSh(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("install.sh is for Linux and macOS; install.ps1 is tested on Windows")
	}
	for _, p := range []string{"sh", "tar"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s on PATH", p)
		}
	}
	root := repoRoot(t)
	script := filepath.Join(root, "scripts", "install.sh")
	dist := buildRelease(t)
	archive := "shogun-" + runtime.GOOS + "-" + runtime.GOARCH + ".tar.gz"
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sums), "  "+archive+"\n") {
		t.Fatalf("SHA256SUMS does not list %s:\n%s", archive, sums)
	}
	// A PATH without the install folders: the script must say so.
	path := "/usr/local/bin:/usr/bin:/bin"

	t.Run("http", func(t *testing.T) {
		_, curl := exec.LookPath("curl")
		_, wget := exec.LookPath("wget")
		if curl != nil && wget != nil {
			t.Skip("neither curl nor wget on PATH")
		}
		srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
		defer srv.Close()
		dir := filepath.Join(t.TempDir(), "bin")
		r := run(t, root, envWith("PATH="+path, "HOME="+t.TempDir()), "sh", script, "-b", srv.URL, "-d", dir)
		if r.code != 0 {
			t.Fatalf("install from %s: %s", srv.URL, r)
		}
		bin := filepath.Join(dir, "shogun")
		if !strings.Contains(r.stdout, "installed "+bin+" (") || !strings.Contains(r.stdout, testVersion) {
			t.Errorf("want a line naming %s and %s, got %s", bin, testVersion, r)
		}
		if !strings.Contains(r.stdout, dir+" is not on PATH") || !strings.Contains(r.stdout, "export PATH=\""+dir+":$PATH\"") {
			t.Errorf("want how to put %s on PATH, got %s", dir, r)
		}
		if v := run(t, root, nil, bin, "--version"); v.code != 0 || !strings.Contains(v.stdout, testVersion) {
			t.Errorf("installed shogun --version: want %s stamped in, got %s", testVersion, v)
		}

		// Again over the installed one: replaced, no temporary file left.
		if r := run(t, root, envWith("PATH="+dir+":"+path), "sh", script, "-b", srv.URL+"/", "-d", dir); r.code != 0 || strings.Contains(r.stdout, "not on PATH") {
			t.Fatalf("reinstall, with %s on PATH: want success and no PATH advice, got %s", dir, r)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("want only shogun in %s, got %v", dir, entries)
		}
	})

	t.Run("folder and file URL from the environment", func(t *testing.T) {
		for _, base := range []string{dist, "file://" + dist} {
			dir := filepath.Join(t.TempDir(), "bin")
			r := run(t, root, envWith("PATH="+path, "SHOGUN_INSTALL_BASE_URL="+base, "SHOGUN_INSTALL_DIR="+dir), "sh", script)
			if r.code != 0 || !strings.Contains(r.stdout, "installed "+filepath.Join(dir, "shogun")) {
				t.Fatalf("install from %s into %s: %s", base, dir, r)
			}
		}
	})

	t.Run("damaged archive refused", func(t *testing.T) {
		bad := copyDir(t, dist)
		f, err := os.OpenFile(filepath.Join(bad, archive), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte{0})
		f.Close()
		dir := filepath.Join(t.TempDir(), "bin")
		r := run(t, root, envWith("PATH="+path), "sh", script, "-b", bad, "-d", dir)
		if r.code != 1 || !strings.Contains(r.stderr, archive+": SHA-256 is ") || !strings.Contains(r.stderr, "not installed") {
			t.Fatalf("want the checksum mismatch named and exit 1, got %s", r)
		}
		if _, err := os.Stat(filepath.Join(dir, "shogun")); err == nil {
			t.Errorf("a damaged archive was installed")
		}
	})

	t.Run("archive not listed", func(t *testing.T) {
		bad := copyDir(t, dist)
		if err := os.WriteFile(filepath.Join(bad, "SHA256SUMS"), []byte(strings.Repeat("0", 64)+"  shogun-plan9-mips.tar.gz\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, root, envWith("PATH="+path), "sh", script, "-b", bad, "-d", t.TempDir())
		if r.code != 1 || !strings.Contains(r.stderr, "SHA256SUMS at "+bad+" lists no "+archive) {
			t.Fatalf("want the missing checksum named and exit 1, got %s", r)
		}
	})

	t.Run("usage", func(t *testing.T) {
		if r := run(t, root, nil, "sh", script, "--frobnicate"); r.code != 2 || !strings.Contains(r.stderr, "unknown argument --frobnicate") {
			t.Errorf("unknown argument: want exit 2 naming it, got %s", r)
		}
		if r := run(t, root, nil, "sh", script, "-h"); r.code != 0 || !strings.Contains(r.stdout, "usage: install.sh") {
			t.Errorf("-h: want usage and exit 0, got %s", r)
		}
		if r := run(t, root, nil, "sh", script, "-b", "ftp://example.invalid", "-d", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "only http://, https:// and file://") {
			t.Errorf("ftp URL: want it refused, got %s", r)
		}
	})
}

// TestInstallPs1 runs scripts/install.ps1 against a release folder where
// PowerShell is (the Windows workflow: Windows PowerShell 5.1 and PowerShell
// 7); elsewhere the script is only parsed (TestPowerShellScriptsParse).
func TestInstallPs1(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("install.ps1 runs on Windows; here it is parsed by TestPowerShellScriptsParse")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH (under Wine): the archives are built by go run ./tools/release; the Windows workflow runs this")
	}
	var shells []string
	for _, s := range []string{"powershell", "pwsh"} {
		if _, err := exec.LookPath(s); err == nil {
			shells = append(shells, s)
		}
	}
	if len(shells) == 0 {
		t.Skip("neither powershell nor pwsh on PATH")
	}
	root := repoRoot(t)
	script := filepath.Join(root, "scripts", "install.ps1")
	dist := buildRelease(t)
	archive := "shogun-windows-" + runtime.GOARCH + ".zip"
	for _, sh := range shells {
		t.Run(sh, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "shogun bin")
			r := run(t, root, envWith("PATH="+os.Getenv("PATH")), sh, "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", script, "-BaseUrl", dist, "-InstallDir", dir, "-NoPath")
			exe := filepath.Join(dir, "shogun.exe")
			if r.code != 0 || !strings.Contains(r.stdout, "installed "+exe+" (") || !strings.Contains(r.stdout, testVersion) {
				t.Fatalf("install into %s: want a line naming it and %s, got %s", dir, testVersion, r)
			}
			if !strings.Contains(r.stdout, dir+" is not on PATH") {
				t.Errorf("-NoPath: want how to put %s on PATH, got %s", dir, r)
			}
			// Over a running shogun.exe is not tried here; over an installed one is.
			if r := run(t, root, nil, sh, "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", script, "-BaseUrl", "file:///"+filepath.ToSlash(dist), "-InstallDir", dir, "-NoPath"); r.code != 0 {
				t.Fatalf("reinstall from a file:// URL: %s", r)
			}
			if v := run(t, root, nil, exe, "--version"); v.code != 0 || !strings.Contains(v.stdout, testVersion) {
				t.Errorf("installed shogun.exe --version: want %s, got %s", testVersion, v)
			}

			bad := copyDir(t, dist)
			f, err := os.OpenFile(filepath.Join(bad, archive), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{0})
			f.Close()
			dir2 := filepath.Join(t.TempDir(), "bin")
			r = run(t, root, nil, sh, "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", script, "-BaseUrl", bad, "-InstallDir", dir2, "-NoPath")
			if r.code == 0 || !strings.Contains(r.stderr+r.stdout, archive+": SHA-256 is ") {
				t.Fatalf("damaged archive: want it refused, got %s", r)
			}
			if _, err := os.Stat(filepath.Join(dir2, "shogun.exe")); err == nil {
				t.Errorf("a damaged archive was installed")
			}
		})
	}
}
