package control

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/supervisor"
)

// peerResult is what the server learned of one accepted connection.
type peerResult struct {
	pid int
	err error
}

// The endpoint asks the OS which process is at the other end of each
// connection: here the test itself, through the real socket or named pipe.
func TestEndpointTellsTheClientsProcess(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(ws+"/runtime/state", 0o700); err != nil {
		t.Fatal(err)
	}
	ln, addr, err := listen(ws, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan peerResult, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			pid, err := peerPid(c)
			accepted <- peerResult{pid, err}
			defer c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	// Under Wine 8 the first client of a go-winio pipe may land on an
	// instance nobody serves (see Client.dial): a connection the server
	// has not seen is made again.
	var got peerResult
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := dial(ctx, addr)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		defer func(c net.Conn) { c.Close() }(c)
		select {
		case got = <-accepted:
		case <-time.After(2 * time.Second):
			if try < 5 {
				continue
			}
			t.Fatal("the server never saw a connection")
		}
		break
	}
	if errors.Is(got.err, supervisor.ErrNoProcessTree) {
		t.Skip(got.err)
	}
	if got.err != nil || got.pid != os.Getpid() {
		t.Errorf("the client's process = %d, %v; want this process, %d", got.pid, got.err, os.Getpid())
	}
}
