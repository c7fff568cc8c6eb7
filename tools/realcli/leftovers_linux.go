package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// marked lists the processes whose environment holds runMarker=value: what
// one run of the CLIs started, wherever it went (a daemon in a session of
// its own, a helper re-parented to init). Each comes with its command line.
func marked(value string) map[int]string {
	want := []byte(runMarker + "=" + value)
	out := map[int]string{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !containsField(env, want) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue // a zombie has ended; only its parent's wait is missing
			}
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out[pid] = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// containsField reports whether the NUL-separated list holds field exactly.
func containsField(list, field []byte) bool {
	for _, f := range bytes.Split(list, []byte{0}) {
		if bytes.Equal(f, field) {
			return true
		}
	}
	return false
}

// killMarked SIGKILLs every process marked with value, by its pid.
func killMarked(value string) error {
	var errs []error
	for pid := range marked(value) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
