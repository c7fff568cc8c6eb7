//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// pkg is a package as `GOOS=windows go list` sees it.
type pkg struct {
	path, dir, name string
	tests           int // test files, internal and external
}

func listPackages(patterns []string) ([]pkg, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{.Name}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var out []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue
		}
		var in, ext int
		fmt.Sscan(f[3], &in)
		fmt.Sscan(f[4], &ext)
		out = append(out, pkg{path: f[0], dir: f[1], name: f[2], tests: in + ext})
	}
	return out, nil
}

// result is what one package's test binary did under Wine.
type result struct {
	pkg                  pkg
	status               string // ok, FAIL, timeout, build failed, no tests
	passed, failed, skip int
	skips                []skip
	failures             []string
	log                  string
	took                 time.Duration
	cover                *coverage // for coveredPackages only
}

func (r result) ok() bool { return r.status == "ok" || r.status == "no tests" }

// wineFailedToStart reports whether a package failed because Wine itself
// did (its client lost the wineserver) before any test ran.
func wineFailedToStart(r result) bool {
	if r.status != "FAIL" || r.passed+r.failed+r.skip > 0 {
		return false
	}
	b, err := os.ReadFile(r.log)
	return err == nil && bytes.Contains(b, []byte("wine client error"))
}

// skip is one skipped test and the reason it gave.
type skip struct{ test, reason string }

// overlayTest is added to every package's test build through -overlay,
// so the packages carry nothing for Wine. Go's os.RemoveAll (and with it
// every t.TempDir cleanup) deletes with FileDispositionInformationEx, which
// Wine 8 does not implement and answers with STATUS_NOT_IMPLEMENTED, a
// status Go does not take as "use the older call". This makes it use the
// older call (FileDispositionInformation), as it does on Windows before
// 1607. Reaching into the runtime this way needs -checklinkname=0.
const overlayTest = `package %s

import _ "unsafe"

//go:linkname wineDeleteatFallback internal/syscall/windows.TestDeleteatFallback
var wineDeleteatFallback bool

func init() { wineDeleteatFallback = true }
`

// testAll builds each package's test binary (one at a time: the compiler
// already uses every core) and runs up to o.parallel of them under Wine
// while the next ones build.
func testAll(o options, p prefix, work string, pkgs []pkg) []result {
	results := make([]result, len(pkgs))
	overlay, err := writeOverlay(work, pkgs)
	shogunExe := filepath.Join(work, "shogun.exe")
	if err == nil {
		err = goBuild([]string{"build"}, shogunExe, "./cmd/shogun")
	}
	if err != nil {
		for i := range pkgs {
			results[i] = result{pkg: pkgs[i], status: "build failed", failures: []string{err.Error()}}
		}
		return results
	}

	built := make(chan int)
	go func() {
		defer close(built)
		for i, pk := range pkgs {
			if pk.tests == 0 {
				results[i] = result{pkg: pk, status: "no tests"}
				continue
			}
			exe := filepath.Join(work, strings.ReplaceAll(pk.path, "/", "_")+".test.exe")
			verb := []string{"test", "-c", "-overlay", overlay, "-ldflags=-checklinkname=0"}
			if covered(pk) {
				verb = append(verb, "-cover")
			}
			if err := goBuild(verb, exe, pk.path); err != nil {
				results[i] = result{pkg: pk, status: "build failed", failures: []string{err.Error()}}
				continue
			}
			built <- i
		}
	}()
	var wg sync.WaitGroup
	for range max(o.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range built {
				pk := pkgs[i]
				exe := filepath.Join(work, strings.ReplaceAll(pk.path, "/", "_")+".test.exe")
				results[i] = runTests(o, p, pk, exe, windowsPath(shogunExe))
				if wineFailedToStart(results[i]) {
					// Wine's own client lost its server before the binary
					// ran a test: once more, so that a hiccup of Wine is not
					// taken for a failing package.
					fmt.Printf("test-windows: %-45s Wine failed to start it (%s); once more\n", pk.path, results[i].log)
					results[i] = runTests(o, p, pk, exe, windowsPath(shogunExe))
				}
				fmt.Printf("test-windows: %-45s %s (%d passed, %d failed, %d skipped, %s)\n",
					pk.path, results[i].status, results[i].passed, results[i].failed, results[i].skip, results[i].took.Round(100*time.Millisecond))
			}
		}()
	}
	wg.Wait()
	return results
}

// writeOverlay writes the -overlay file that adds overlayTest to every
// package.
func writeOverlay(work string, pkgs []pkg) (string, error) {
	replace := map[string]string{}
	for i, pk := range pkgs {
		src := filepath.Join(work, fmt.Sprintf("overlay-%d_test.go", i))
		if err := os.WriteFile(src, []byte(fmt.Sprintf(overlayTest, pk.name)), 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(pk.dir, "zz_wine_overlay_test.go")] = src
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(work, "overlay.json")
	return path, os.WriteFile(path, b, 0o644)
}

// goBuild cross-compiles one package for windows/amd64 into out.
func goBuild(verb []string, out, pkgPath string) error {
	args := append(append([]string{}, verb...), "-o", out, pkgPath)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// event is one line of test2json's output.
type event struct {
	Action string
	Test   string
	Output string
}

// runTests runs one test binary under Wine in its package's folder, as go
// test does, and reads its results through test2json.
func runTests(o options, p prefix, pk pkg, exe, shogunExe string) (r result) {
	r = result{pkg: pk, log: strings.TrimSuffix(exe, ".test.exe") + ".log"}
	start := time.Now()
	defer func() { r.took = time.Since(start) }()

	args := []string{exe, "-test.v=test2json", "-test.count=1", "-test.timeout=" + o.timeout.String()}
	if o.run != "" {
		args = append(args, "-test.run="+o.run)
	}
	profile := strings.TrimSuffix(exe, ".test.exe") + ".cover"
	// The tests' own child processes (the test binary run as a helper, as
	// agentsim's agent in a pseudo console) write their counters to
	// GOCOVERDIR when they exit.
	childCover := strings.TrimSuffix(exe, ".test.exe") + ".covdata"
	var coverEnv []string
	if covered(pk) {
		args = append(args, "-test.coverprofile="+windowsPath(profile))
		if err := os.MkdirAll(childCover, 0o755); err == nil {
			coverEnv = append(coverEnv, "GOCOVERDIR="+windowsPath(childCover))
		}
		defer func() {
			if c, err := readCoverage(profile, childCover); err == nil {
				r.cover = &c
			}
		}()
	}
	cmd := p.command(args...)
	cmd.Dir = pk.dir
	// The shogun binary for tests that run it (shoguntest.Main): there is
	// no Go toolchain inside Wine to build it.
	cmd.Env = append(append(cmd.Env, "SHOGUN_TEST_BIN="+shogunExe), coverEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	conv := exec.Command("go", "tool", "test2json", "-p", pk.path)
	toConv, err := conv.StdinPipe()
	if err != nil {
		r.status, r.failures = "FAIL", []string{err.Error()}
		return r
	}
	events, err := conv.StdoutPipe()
	if err != nil {
		r.status, r.failures = "FAIL", []string{err.Error()}
		return r
	}
	logf, err := os.Create(r.log)
	if err != nil {
		r.status, r.failures = "FAIL", []string{err.Error()}
		return r
	}
	defer logf.Close()
	if err := conv.Start(); err != nil {
		r.status, r.failures = "FAIL", []string{err.Error()}
		return r
	}
	// Wine hands the output pipe to every process the tests start, so a
	// leftover one would hold it open after the test binary has ended:
	// the output is copied by hand, and given up a little after the end.
	outR, outW, err := os.Pipe()
	if err != nil {
		toConv.Close()
		conv.Wait()
		r.status, r.failures = "FAIL", []string{err.Error()}
		return r
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		toConv.Close()
		conv.Wait()
		r.status, r.failures = "FAIL", []string{fmt.Sprintf("start wine: %v", err)}
		return r
	}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(toConv, outR)
		close(copied)
	}()
	// The binary's own -test.timeout panics with a stack; this catches a
	// test binary that hangs in Wine beyond that.
	timedOut := false
	var mu sync.Mutex
	killGroup := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	timer := time.AfterFunc(o.timeout+30*time.Second, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		killGroup()
	})
	go func() {
		_ = cmd.Wait()
		select {
		case <-copied:
		case <-time.After(5 * time.Second):
			killGroup()
			outR.Close()
			<-copied
		}
		outR.Close()
		toConv.Close()
	}()

	outputs := map[string][]string{}
	running := map[string]bool{}
	pkgDone := ""
	sc := bufio.NewScanner(events)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Action == "output" {
			io.WriteString(logf, e.Output)
		}
		if e.Test == "" {
			if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
				pkgDone = e.Action
			}
			continue
		}
		switch e.Action {
		case "run":
			running[e.Test] = true
		case "output":
			outputs[e.Test] = append(outputs[e.Test], e.Output)
		case "pass":
			r.passed++
			delete(running, e.Test)
		case "fail":
			r.failed++
			r.failures = append(r.failures, e.Test)
			delete(running, e.Test)
		case "skip":
			r.skip++
			r.skips = append(r.skips, skip{e.Test, skipReason(outputs[e.Test])})
			delete(running, e.Test)
		}
		if e.Action != "output" && e.Action != "run" {
			delete(outputs, e.Test)
		}
	}
	conv.Wait()
	timer.Stop()
	mu.Lock()
	defer mu.Unlock()
	// A test still running when the binary ended (a panic, a timeout) failed.
	for t := range running {
		r.failed++
		r.failures = append(r.failures, t+" (did not finish)")
	}
	switch {
	case timedOut:
		r.status = "timeout"
	case r.failed > 0 || pkgDone == "fail" || cmd.ProcessState == nil || !cmd.ProcessState.Success():
		r.status = "FAIL"
	default:
		r.status = "ok"
	}
	return r
}

var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the message the test gave with t.Skip: its last output line
// with a file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], "\r\n")
		if fileLine.MatchString(l) {
			return strings.TrimSpace(fileLine.ReplaceAllString(l, ""))
		}
	}
	return "(no reason given)"
}

// printSummary prints the table, the skip reasons and the failures, and
// returns the closing count line ("wine: N passed, N failed, N skipped"),
// which the caller prints last so that CI reads it as the run's result.
func printSummary(w io.Writer, results []result) string {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tRESULT\tRAN\tPASSED\tFAILED\tSKIPPED\tTIME")
	var passed, failed, skipped int
	for _, r := range results {
		ran := r.passed + r.failed + r.skip
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.pkg.path, r.status, ran, r.passed, r.failed, r.skip, r.took.Round(100*time.Millisecond))
		passed += r.passed
		failed += r.failed
		skipped += r.skip
	}
	tw.Flush()

	printCoverage(w, results)

	// Skips grouped by reason: one reason usually covers many tests.
	type group struct {
		reason string
		tests  []string
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, r := range results {
		for _, s := range r.skips {
			g := byReason[s.reason]
			if g == nil {
				g = &group{reason: s.reason}
				byReason[s.reason] = g
				groups = append(groups, g)
			}
			g.tests = append(g.tests, strings.TrimPrefix(r.pkg.path, "github.com/shogun-dev/shogun/")+"."+s.test)
		}
	}
	if len(groups) > 0 {
		fmt.Fprintln(w, "\nSkipped under Wine:")
		for _, g := range groups {
			sort.Strings(g.tests)
			fmt.Fprintf(w, "  %d × %s\n      %s\n", len(g.tests), g.reason, strings.Join(g.tests, ", "))
		}
	}
	for _, r := range results {
		if r.ok() {
			continue
		}
		fmt.Fprintf(w, "\n%s %s:\n", r.status, r.pkg.path)
		for _, f := range r.failures {
			fmt.Fprintf(w, "  %s\n", f)
		}
		if r.log != "" {
			fmt.Fprintf(w, "  log: %s\n", r.log)
		}
	}
	return fmt.Sprintf("wine: %d passed, %d failed, %d skipped", passed, failed, skipped)
}
