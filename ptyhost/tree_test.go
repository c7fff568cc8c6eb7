package ptyhost

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The console asks which process holds the client's end of a loopback
// connection: here the test itself, over IPv4 and IPv6.
func TestLoopbackOwnersFindsTheClient(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", addr, err)
			continue
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		want := os.Getpid()
		if runtime.GOOS == "linux" {
			// Linux does not read the calling process's descriptors: the
			// client's end goes to a child, as an agent's would be.
			want = holdInChild(t, client.(*net.TCPConn))
		}
		pids, err := LoopbackOwners(server.RemoteAddr().(*net.TCPAddr).AddrPort(), server.LocalAddr().(*net.TCPAddr).AddrPort())
		if errors.Is(err, ErrNoProcessTree) {
			t.Skip(err)
		}
		if runtime.GOOS == "windows" && err == nil && len(pids) == 0 && strings.HasPrefix(addr, "[") {
			t.Logf("%s: no owner: Wine 8 tells none for IPv6", addr)
			continue
		}
		if err != nil || !slices.Contains(pids, want) {
			t.Errorf("%s: the client's owners = %v, %v; want %d", addr, pids, err, want)
		}
		// No connection runs from the listening port to itself.
		lp := ln.Addr().(*net.TCPAddr).AddrPort()
		pids, err = LoopbackOwners(lp, lp)
		if err != nil || len(pids) != 0 {
			t.Errorf("%s: owners of a connection that does not exist = %v, %v; want none", addr, pids, err)
		}
	}
}

// holdInChild starts a child that holds c's socket (inherited as fd 3)
// until the test ends, and returns its pid.
func holdInChild(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	f, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
