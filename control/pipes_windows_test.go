package control_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// skipWithoutPipes skips a test under Wine when a named pipe round trip
// does not work there: Wine 8 never completes a server's overlapped
// ConnectNamedPipe through an I/O completion port, so a pipe server (go-winio,
// as Docker and containerd use on Windows) accepts nothing. On Windows the
// probe must pass, and a failure is the test's to report.
func skipWithoutPipes(t *testing.T) {
	t.Helper()
	ok, why := pipeRoundTrip()
	wine := windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
	t.Logf("named pipe round trip: %v %s (Wine: %v)", ok, why, wine)
	if !ok && wine {
		t.Skipf("named pipes do not work under this Wine: %s", why)
	}
}

func pipeRoundTrip() (bool, string) {
	addr := fmt.Sprintf(`\\.\pipe\shogun-probe-%d`, time.Now().UnixNano())
	ln, err := winio.ListenPipe(addr, nil)
	if err != nil {
		return false, "listen: " + err.Error()
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = io.Copy(c, io.LimitReader(c, 4))
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := winio.DialPipeContext(ctx, addr)
	if err != nil {
		return false, "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		return false, "write: " + err.Error()
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil {
		return false, "the server never accepted the connection (read: " + err.Error() + ")"
	}
	return true, ""
}
