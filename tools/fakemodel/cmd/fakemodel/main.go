// Command fakemodel runs the scripted model server of tools/fakemodel, so
// that a team of real CLIs can be tried without an account:
//
//	go run ./tools/fakemodel/cmd/fakemodel [-addr 127.0.0.1:0] [-dump DIR]
//
// It prints its URL and logs every request to standard error until
// interrupted. tools/fakemodel/README.md says how to point each CLI at it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/shogun-dev/shogun/tools/fakemodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback only)")
	dump := flag.String("dump", "", "write every request body into this folder")
	window := flag.Float64("window-used", 0, "answer Codex with this share of its usage window used, in percent (its x-codex-primary-used-percent header); 0: no header")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &fakemodel.Server{Addr: *addr, Log: os.Stderr, DumpDir: *dump}
	if *window > 0 {
		srv.WindowUsed = func(string) (float64, bool) { return *window, true }
	}
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())
	<-ctx.Done()
	_ = srv.Close()
}
