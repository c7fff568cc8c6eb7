package ptyhost

import (
	"io"
	"strings"
	"testing"
)

// Snapshots are kept between changes of the screen, so each change must
// show in the next one: a stale screen would make typing see an echo that
// is gone or miss a submit.
func TestASnapshotShowsEveryChangeOfTheScreen(t *testing.T) {
	m := newScreenModel(40, 6, io.Discard)
	defer m.close()
	m.write([]byte("› "))
	first := m.snapshot()
	if got := first.CursorLine(); got != "› " {
		t.Fatalf("first screen's cursor line %q, want %q", got, "› ")
	}
	first.Lines[0] = "changed by a caller"

	steps := []struct {
		name  string
		do    func()
		check func(ScreenSnapshot) string
	}{
		{"a caller's edit of its copy", func() {}, func(s ScreenSnapshot) string {
			if s.Lines[0] != "› " {
				return "row 0 is " + s.Lines[0]
			}
			return ""
		}},
		{"typed text", func() { m.write([]byte("fix the login page")) }, func(s ScreenSnapshot) string {
			if s.CursorLine() != "› fix the login page" || s.CursorCol != 20 {
				return "cursor line " + s.CursorLine()
			}
			return ""
		}},
		{"a cursor move alone", func() { m.write([]byte("\x1b[3;5H")) }, func(s ScreenSnapshot) string {
			if s.CursorRow != 2 || s.CursorCol != 4 {
				return "cursor not at row 2, column 4"
			}
			return ""
		}},
		{"a resize", func() { m.resize(30, 6) }, func(s ScreenSnapshot) string {
			if s.Cols != 30 {
				return "width not 30"
			}
			return ""
		}},
		{"the alternate screen", func() { m.write([]byte("\x1b[?1049h\x1b[Hdialog")) }, func(s ScreenSnapshot) string {
			if !s.AltScreen || !strings.Contains(s.Text(), "dialog") || strings.Contains(s.Text(), "login") {
				return "not the alternate screen's text: " + s.Text()
			}
			return ""
		}},
		{"nothing new", func() {}, func(s ScreenSnapshot) string {
			if !s.AltScreen || s.Lines[0] != "dialog" {
				return "the unchanged screen reads " + s.Text()
			}
			return ""
		}},
	}
	for _, st := range steps {
		st.do()
		got := m.snapshot()
		if msg := st.check(got); msg != "" {
			t.Errorf("after %s: %s", st.name, msg)
		}
		fresh := renderAfresh(t, m)
		if got.Text() != fresh {
			t.Errorf("after %s: snapshot %q, a fresh render %q", st.name, got.Text(), fresh)
		}
	}
}

// renderAfresh renders m's screen afresh, past any kept snapshot.
func renderAfresh(t *testing.T, m *screenModel) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snapshotLocked().Text()
}
