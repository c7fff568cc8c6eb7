package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// profileTo writes a CPU profile of this process to dir/cpu-PID.pprof until
// the returned func is called, which also writes its heap to
// dir/heap-PID.pprof. The bench sets SHOGUN_BENCH_PROFILE to find what the
// supervisor spends per role; a failure is told on stderr, never fatal.
func profileTo(dir string, stderr io.Writer) func() {
	// Only this process: not the agent-sim roles and hooks it starts.
	_ = os.Unsetenv("SHOGUN_BENCH_PROFILE")
	name := func(kind string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", kind, os.Getpid())) }
	cpu, err := os.Create(name("cpu"))
	if err != nil {
		fmt.Fprintf(stderr, "shogun: profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintf(stderr, "shogun: profile: %v\n", err)
		_ = cpu.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = cpu.Close()
		heap, err := os.Create(name("heap"))
		if err != nil {
			fmt.Fprintf(stderr, "shogun: profile: %v\n", err)
			return
		}
		defer heap.Close()
		if err := pprof.WriteHeapProfile(heap); err != nil {
			fmt.Fprintf(stderr, "shogun: profile: %v\n", err)
		}
	}
}
