package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/config"
)

func TestGuardNamesTheConsoleOnly(t *testing.T) {
	local := newGuard(strings.Repeat("a", 64), config.UISettings{Host: "localhost", Port: 5173}, true)
	remote := newGuard(strings.Repeat("a", 64), config.UISettings{Host: "0.0.0.0", Port: 5173, AllowRemote: true}, false)
	named := newGuard(strings.Repeat("a", 64), config.UISettings{Host: "box.lan", Port: 5173, AllowRemote: true}, false)
	hosts := []struct {
		g    *guard
		host string
		ok   bool
	}{
		{local, "localhost:5173", true},
		{local, "LocalHost:5173", true},
		{local, "127.0.0.1:5173", true},
		{local, "[::1]:5173", true},
		{local, "localhost", false},                 // no port: not what a browser sends for :5173
		{local, "localhost:80", false},              // another server's address
		{local, "evil.example:5173", false},         // DNS rebinding
		{local, "127.0.0.1.nip.io:5173", false},     // a name that resolves to loopback is still a foreign name
		{local, "192.168.1.5:5173", false},          // not this console's address
		{remote, "192.168.1.5:5173", true},          // listening on every address: any IP of the machine
		{remote, "evil.example:5173", false},        // but never a foreign name
		{named, "box.lan:5173", true},               // the configured name
		{named, "evil.example:5173", false},         //
		{named, "10.0.0.9:5173", false},             // an IP the configuration does not name
		{named, "box.lan.evil.example:5173", false}, //
	}
	for _, c := range hosts {
		if got := c.g.hostOK(c.host); got != c.ok {
			t.Errorf("hostOK(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
	origins := []struct {
		origin string
		ok     bool
	}{
		{"http://localhost:5173", true},
		{"http://127.0.0.1:5173", true},
		{"https://localhost:5173", false},
		{"http://localhost:3000", false},
		{"http://localhost:5173/path", false},
		{"http://user@localhost:5173", false},
		{"null", false},
		{"", false},
	}
	for _, c := range origins {
		if got := local.originOK(c.origin); got != c.ok {
			t.Errorf("originOK(%q) = %v, want %v", c.origin, got, c.ok)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true,
		"0.0.0.0": false, "::": false, "192.168.1.5": false, "10.0.0.1": false,
	} {
		got, err := isLoopback(host)
		if err != nil || got != want {
			t.Errorf("isLoopback(%q) = %v, %v; want %v", host, got, err, want)
		}
	}
}

func TestTokenFileIsOwnerOnlyAndKept(t *testing.T) {
	ws := t.TempDir()
	tok, err := loadToken(ws)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "runtime", "state", "ui.token")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if ownerOnly(fi) == false {
		t.Errorf("ui.token mode %v, want owner-only", fi.Mode().Perm())
	}
	again, err := loadToken(ws)
	if err != nil || again != tok {
		t.Errorf("a second start made token %q (%v), want the same %q: open tabs keep working across restarts", again, err, tok)
	}
	if read, err := ReadToken(ws); err != nil || read != tok {
		t.Errorf("ReadToken = %q, %v", read, err)
	}
	// A token others could have read is replaced.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); ownerOnly(fi) {
		t.Skip("this system does not keep group and other permissions")
	}
	fresh, err := loadToken(ws)
	if err != nil || fresh == tok || !validToken(fresh) {
		t.Errorf("after chmod 0644 the token is %q (%v); want a new one", fresh, err)
	}
	if fi, _ := os.Stat(path); !ownerOnly(fi) {
		t.Errorf("the new ui.token has mode %v", fi.Mode().Perm())
	}
	// A broken file is replaced too, and ReadToken says what is wrong.
	if err := os.WriteFile(path, []byte("not a token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(ws); err == nil {
		t.Error("ReadToken accepted a file without a token")
	}
}
