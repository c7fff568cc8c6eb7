//go:build !windows

package control

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/workspace"
)

// longWorkspace is a workspace whose socket cannot live in it, with the
// temporary folder (where the socket goes instead) a new, short one of the
// test's, so that the test owns everything it makes there.
func longWorkspace(t *testing.T) (ws, tmp string) {
	t.Helper()
	tmp, err := os.MkdirTemp("/tmp", "sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	ws = filepath.Join(t.TempDir(), strings.Repeat("deep-folder-", 9))
	if err := os.MkdirAll(workspace.New(ws).State(), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, tmp
}

// acceptForever listens on path, accepts every connection and never answers
// it, as a supervisor that is stuck would; it counts the connections.
func acceptForever(t *testing.T, path string) *atomic.Int32 {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int32)
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			n.Add(1)
			held = append(held, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return n
}

// Another user cannot keep a supervisor from listening by making the
// runtime folder (shogun-<uid> in the temporary folder) first, nor by
// making it open to others, nor by putting a file there: the socket goes
// to a private folder of its own, the pointer names it, and the client
// finds it. The next start takes the same folder again.
func TestSocketFolderNotYoursIsSkipped(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"owned by another user": func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a folder to another user")
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 1001, 1001); err != nil {
				t.Fatal(err)
			}
		},
		"open to others": func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		},
		"a file": func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			ws, tmp := longWorkspace(t)
			taken := runtimeDir()
			if filepath.Dir(taken) != tmp {
				t.Fatalf("runtime folder %s is not in the test's temporary folder %s", taken, tmp)
			}
			plant(t, taken)

			ln, path, err := listen(ws, zerolog.Nop())
			if err != nil {
				t.Fatalf("listen refused: %v", err)
			}
			ln.Close()
			dir := filepath.Dir(path)
			if dir == taken || !strings.HasPrefix(filepath.Base(dir), filepath.Base(taken)+"-") || filepath.Dir(dir) != tmp {
				t.Errorf("socket at %s, want one in a new private folder %s-… beside %s", path, filepath.Base(taken), taken)
			}
			if err := privateDir(dir); err != nil {
				t.Errorf("socket folder %s %v", dir, err)
			}
			if b, _ := os.ReadFile(workspace.New(ws).SocketPointer()); strings.TrimSpace(string(b)) != path {
				t.Errorf("pointer names %q, want %s", b, path)
			}
			if got := Endpoint(ws); got != path {
				t.Errorf("the client looks for %s, want %s", got, path)
			}
			ln, again, err := listen(ws, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			ln.Close()
			if again != path {
				t.Errorf("the next start listens at %s, want the same %s", again, path)
			}
		})
	}
}

// A client never connects to a socket in a folder that another user made
// (one a supervisor of the user's never listens in): it says no supervisor
// runs, and whoever listens there hears nothing.
func TestClientSkipsASocketInAnotherUsersFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	ws, _ := longWorkspace(t)
	dir := runtimeDir()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, socketName(ws))
	heard := acceptForever(t, path)
	if err := os.Chown(dir, 1001, 1001); err != nil {
		t.Fatal(err)
	}
	cl := NewClient(ws)
	if cl.Endpoint() != path {
		t.Fatalf("client endpoint %s, want %s", cl.Endpoint(), path)
	}
	_, err := cl.Status()
	if !errors.Is(err, ErrNoSupervisor) || !strings.Contains(err.Error(), "is owned by user 1001") {
		t.Errorf("status: %v; want no supervisor, the folder being another user's", err)
	}
	if n := heard.Load(); n != 0 {
		t.Errorf("the socket in another user's folder got %d connection(s)", n)
	}
}

// A supervisor that takes the connection and never answers: each request
// ends at its deadline with an error that names the endpoint and what to
// look at, attach's handshake too.
func TestRequestWithoutAnswerEndsAtItsDeadline(t *testing.T) {
	ws := t.TempDir()
	l := workspace.New(ws)
	if err := os.MkdirAll(l.State(), 0o755); err != nil {
		t.Fatal(err)
	}
	acceptForever(t, l.Socket())
	cl := NewClient(ws)
	cl.timeout, cl.slowTimeout = 300*time.Millisecond, 300*time.Millisecond
	calls := map[string]func() error{
		"status": func() error { _, err := cl.Status(); return err },
		"type":   func() error { _, err := cl.Type("a", "x", true); return err },
		"reload": func() error { _, err := cl.Reload(); return err },
		"attach": func() error { _, err := cl.Attach("a", true, 80, 24); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- call() }()
			select {
			case err := <-errc:
				if !errors.Is(err, ErrNoAnswer) {
					t.Fatalf("%s: %v, want ErrNoAnswer", name, err)
				}
				for _, want := range []string{" on " + l.Socket() + " within 300ms: ", l.SupervisorLog()} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s says %q, which lacks %q", name, err, want)
					}
				}
			case <-ctx.Done():
				t.Fatalf("%s still waits for an answer after 30 s", name)
			}
		})
	}
}
