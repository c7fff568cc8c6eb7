// Command testreport runs `go test -json` with the given arguments and
// prints what a person waiting for `make test` wants to see: a line per
// package as soon as it finishes (plain `go test ./...` holds a finished
// package back until every package before it in the list is done, so a slow
// one early in the list hid the others for minutes), the whole output of
// each failed test, a line every minute naming the packages still running,
// and at the end every skipped test's reason, one line per package and
// reason (e.g. the web console's browser tests without Chromium).
//
// usage: go run ./tools/testreport [go test flags] [packages]
//
// Its exit code is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testreport: %v\n", err)
		return 2
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testreport: start go test: %v\n", err)
		return 2
	}
	// Ctrl-C reaches go test through the terminal's process group; this
	// process only must not die before it has printed what came.
	signal.Ignore(os.Interrupt)

	r := newReport(stdout, start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.tick(stop, time.Minute)
	}()
	r.read(out)
	close(stop)
	wg.Wait()
	err = cmd.Wait()
	r.summary(time.Since(start))
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		fmt.Fprintf(stderr, "testreport: go test: %v\n", err)
		return 2
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// report turns the events into lines; mu guards everything, as tick prints
// from its own goroutine.
type report struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	running map[string]time.Time // package → when its first event came
	// output holds each running test's lines (package → test → lines) until
	// it ends: printed only when it fails. A package's own lines are under "".
	output  map[string]map[string][]string
	skips   map[string]map[string][]string // package → reason → tests
	failed  []string
	done    int
	lastOut time.Time
}

func newReport(w io.Writer, start time.Time) *report {
	return &report{
		w:       w,
		start:   start,
		running: map[string]time.Time{},
		output:  map[string]map[string][]string{},
		skips:   map[string]map[string][]string{},
		lastOut: start,
	}
}

// read handles every line go test writes; one that is not JSON (a build
// error before the tests) is printed as it is.
func (r *report) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			r.print(sc.Text())
			continue
		}
		r.handle(e)
	}
}

func (r *report) handle(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Action == "build-output" || e.Action == "build-fail" {
		if e.Output != "" {
			r.printLocked(strings.TrimRight(e.Output, "\n"))
		}
		return
	}
	if e.Package == "" {
		return
	}
	if _, ok := r.running[e.Package]; !ok && e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
		r.running[e.Package] = time.Now()
	}
	tests := r.output[e.Package]
	if tests == nil {
		tests = map[string][]string{}
		r.output[e.Package] = tests
	}
	switch e.Action {
	case "output":
		if e.Test == "" && packageResult(e.Output) {
			return // this report prints its own
		}
		tests[e.Test] = append(tests[e.Test], e.Output)
	case "skip":
		if e.Test != "" {
			reason := skipReason(tests[e.Test])
			if r.skips[e.Package] == nil {
				r.skips[e.Package] = map[string][]string{}
			}
			r.skips[e.Package][reason] = append(r.skips[e.Package][reason], e.Test)
			delete(tests, e.Test)
			return
		}
		r.finishLocked(e, "?   ", "[no test files]")
	case "pass":
		if e.Test != "" {
			delete(tests, e.Test)
			return
		}
		r.finishLocked(e, "ok  ", fmt.Sprintf("%.1fs", e.Elapsed))
	case "fail":
		if e.Test != "" {
			// A failed subtest's lines are also its parent's: print them
			// once, with the outermost failure.
			if !strings.Contains(e.Test, "/") {
				r.printTestLocked(e.Package, e.Test)
			}
			return
		}
		// Lines of tests that never ended (a panic, the timeout) and of the
		// package itself.
		names := make([]string, 0, len(tests))
		for name := range tests {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			r.printTestLocked(e.Package, name)
		}
		r.failed = append(r.failed, e.Package)
		r.finishLocked(e, "FAIL", fmt.Sprintf("%.1fs", e.Elapsed))
	}
}

// printTestLocked prints the collected lines of a test and of its subtests.
func (r *report) printTestLocked(pkg, test string) {
	tests := r.output[pkg]
	names := make([]string, 0)
	for name := range tests {
		if name == test || (test != "" && strings.HasPrefix(name, test+"/")) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, line := range tests[name] {
			r.printLocked(strings.TrimRight(line, "\n"))
		}
		delete(tests, name)
	}
}

func (r *report) finishLocked(e event, status, detail string) {
	delete(r.running, e.Package)
	delete(r.output, e.Package)
	r.done++
	r.printLocked(fmt.Sprintf("%s %s\t%s", status, e.Package, detail))
}

// packageResult tells go test's own end-of-package lines.
func packageResult(line string) bool {
	return line == "PASS\n" || line == "FAIL\n" || strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "?   \t")
}

// skipReason is the message of a t.Skip: the last line of the test's output
// before its "--- SKIP" line, without the file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(msg)], ".go:") {
			return msg
		}
		return l
	}
	return "(no reason given)"
}

// tick names the packages still running when nothing was printed for a
// while, so that a long package does not look like a hang.
func (r *report) tick(stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every / 4)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			r.mu.Lock()
			if now.Sub(r.lastOut) >= every && len(r.running) > 0 {
				pkgs := make([]string, 0, len(r.running))
				for p, since := range r.running {
					pkgs = append(pkgs, fmt.Sprintf("%s (%s)", strings.TrimPrefix(p, modulePrefix(p)), now.Sub(since).Truncate(time.Second)))
				}
				sort.Strings(pkgs)
				r.printLocked(fmt.Sprintf("... %s: %d done, running: %s", now.Sub(r.start).Truncate(time.Second), r.done, strings.Join(pkgs, ", ")))
			}
			r.mu.Unlock()
		}
	}
}

// modulePrefix is the part of an import path up to its module's third
// element (github.com/owner/repo/), dropped in the progress lines.
func modulePrefix(p string) string {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) == 4 {
		return strings.Join(parts[:3], "/") + "/"
	}
	return ""
}

func (r *report) summary(took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pkgs := make([]string, 0, len(r.skips))
	for p := range r.skips {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		reasons := make([]string, 0, len(r.skips[p]))
		for reason := range r.skips[p] {
			reasons = append(reasons, reason)
		}
		sort.Strings(reasons)
		for _, reason := range reasons {
			tests := r.skips[p][reason]
			r.printLocked(fmt.Sprintf("skipped %d in %s: %s (%s)", len(tests), p, reason, listed(tests, 3)))
		}
	}
	if len(r.failed) > 0 {
		r.printLocked(fmt.Sprintf("FAILED after %s: %s", took.Truncate(time.Second), strings.Join(r.failed, " ")))
		return
	}
	r.printLocked(fmt.Sprintf("%d packages in %s", r.done, took.Truncate(time.Second)))
}

// listed names up to n items and how many more.
func listed(items []string, n int) string {
	sort.Strings(items)
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

func (r *report) print(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.printLocked(line)
}

func (r *report) printLocked(line string) {
	fmt.Fprintln(r.w, line)
	r.lastOut = time.Now()
}
