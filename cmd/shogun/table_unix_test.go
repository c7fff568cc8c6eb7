//go:build !windows

package main

import (
	"strings"
	"testing"

	"github.com/clipperhouse/displaywidth"

	"github.com/shogun-dev/shogun/control"
)

// assertTableAligned checks that in the table starting at the line that
// begins with header, every row's cells start at the terminal column where
// their heading starts: what a person sees as straight columns.
func assertTableAligned(t *testing.T, what, out, header string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, header) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("%s: no table with header %q:\n%s", what, header, out)
	}
	// The columns where the headings start, in terminal columns.
	var cols []int
	head := lines[start]
	for i := 1; i < len(head); i++ {
		if head[i] != ' ' && head[i-1] == ' ' {
			cols = append(cols, displaywidth.String(head[:i]))
		}
	}
	rows := 0
	for _, l := range lines[start+1:] {
		if l == "" {
			break
		}
		rows++
		cells := []rune(l)
		// The rune at each terminal column of the row.
		at := map[int]int{}
		w := 0
		for i, r := range cells {
			at[w] = i
			w += displaywidth.Rune(r)
		}
		for _, c := range cols {
			i, ok := at[c]
			if !ok || cells[i] == ' ' || cells[i-1] != ' ' {
				t.Errorf("%s: a cell of row %q does not start at terminal column %d, under its heading:\n%s\n%s", what, l, c, head, l)
				break
			}
		}
	}
	if rows == 0 {
		t.Errorf("%s: the table has no rows:\n%s", what, out)
	}
}

// `init --demo --lang ja` names the roles 将軍, 家老 and 足軽1–3: every table
// the CLI prints about them (the dry run, roles, status, tasks) keeps its
// columns straight, wide characters counting two terminal columns.
func TestTablesWithJapaneseNamesStayAligned(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", "--demo", "--lang", "ja", ws); code != 0 {
		t.Fatalf("init --demo --lang ja: exit %d: %s", code, errOut)
	}
	out, errOut, code := shogun(t, "start", "--dry-run", "-w", ws)
	if code != 0 || !strings.Contains(out, "将軍") {
		t.Fatalf("start --dry-run: exit %d: %s%s", code, out, errOut)
	}
	assertTableAligned(t, "start --dry-run", out, "ROLE ")
	out, _, _ = shogun(t, "roles", "-w", ws)
	assertTableAligned(t, "roles", out, "ROLE ")

	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "テストの失敗を直す 🔧", "--body", "直してください"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitStatus(t, ws, "the task taken", func(s control.StatusReply) bool { return len(s.Tasks) > 0 })
	out, _, _ = shogun(t, "status", "-w", ws)
	assertTableAligned(t, "status", out, "ROLE ")
	waitStatus(t, ws, "the task done", func(s control.StatusReply) bool { return s.Tasks["done"] > 0 })
	out, _, _ = shogun(t, "roles", "-w", ws)
	assertTableAligned(t, "roles with a supervisor", out, "ROLE ")
	out, _, _ = shogun(t, "tasks", "-w", ws)
	if !strings.Contains(out, "テストの失敗を直す") {
		t.Errorf("tasks does not list the Japanese title:\n%s", out)
	}
	assertTableAligned(t, "tasks", out, "TASK ")
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	_ = cmd.Wait()
}
