package control

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/supervisor"
)

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
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	accepted := make(chan error, 1)
	var pid int
	go func() {
		c, err := ln.Accept()
		if err == nil {
			pid, err = peerPid(c)
			c.Close()
		}
		accepted <- err
	}()
	c, err := dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = <-accepted
	if errors.Is(err, supervisor.ErrNoProcessTree) {
		t.Skip(err)
	}
	if err != nil || pid != os.Getpid() {
		t.Errorf("the client's process = %d, %v; want this process, %d", pid, err, os.Getpid())
	}
}
