package queue

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/workspace"
)

// WriteReport writes what the queue reads back unchanged, at the role's
// report_to; a report the queue would reject is an error and no file.
func TestWriteReport(t *testing.T) {
	ws := t.TempDir()
	rep := Report{TaskID: "t-20261122-0001", Status: ReportBlocked, Summary: "Need a decision: which database?",
		Details: "Postgres or SQLite?\n\tBoth would work.\n", Files: []string{"db/schema.sql"},
		SkillCandidate: &SkillCandidate{Name: "pick-db", Description: "When a task needs a database"}}
	path, err := WriteReport(ws, "ashigaru1", rep, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := workspace.New(ws).ReportFile("ashigaru1"); path != want {
		t.Errorf("written to %s, want the role's report_to %s", path, want)
	}
	data, err := ReadFile(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeReport("ashigaru1.yaml", data, Limits{})
	if err != nil || !reflect.DeepEqual(got, rep) {
		t.Fatalf("the queue reads back %+v, %v\nwant %+v\n%s", got, err, rep, data)
	}
	// Windows has no mode bits beyond read-only; the file is private by
	// its folder's access list there.
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != runtimeFileMode {
		t.Errorf("report mode %v, want %v", fi.Mode().Perm(), os.FileMode(runtimeFileMode))
	}

	// The first report is still waiting: a second one does not replace it.
	if _, err := WriteReport(ws, "ashigaru1", Report{TaskID: rep.TaskID, Status: ReportDone, Summary: "other"}, Limits{}); !errors.Is(err, ErrReportWaiting) {
		t.Fatalf("second report while one waits: %v, want ErrReportWaiting", err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Fatalf("the waiting report was changed:\n%s", again)
	}

	bad := []struct {
		name, role string
		rep        Report
		want       string
	}{
		{"bad status", "ashigaru2", Report{TaskID: "t1", Status: "finished", Summary: "s"}, `"status" must be one of done, failed, blocked`},
		{"no summary", "ashigaru2", Report{TaskID: "t1", Status: ReportDone}, `missing "summary"`},
		{"summary on two lines", "ashigaru2", Report{TaskID: "t1", Status: ReportDone, Summary: "one\ntwo"}, `"summary" must be one line`},
		{"escape in details", "ashigaru2", Report{TaskID: "t1", Status: ReportDone, Summary: "s", Details: "\x1b[2J"}, `"details" must be text without control characters`},
		{"role id leaving the folder", "../karo", Report{TaskID: "t1", Status: ReportDone, Summary: "s"}, `bad role id "../karo"`},
		{"too large for the queue", "ashigaru2", Report{TaskID: "t1", Status: ReportDone, Summary: "s", Details: strings.Repeat("x", 2048)}, "over the 1024-byte limit"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := WriteReport(ws, c.role, c.rep, Limits{MaxBytes: 1024})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("WriteReport = %v, want an error containing %q", err, c.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Fatalf("a refused report left files behind: %v", entries)
			}
		})
	}
}

// ReadFile reads like the queue: never through a symbolic link.
func TestReadFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "secret")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "karo.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Skipf("symbolic links are made but not found here (Wine): %v", err)
	}
	var fe *FormatError
	if _, err := ReadFile(link, Limits{}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadFile of a link = %v, want a FormatError", err)
	}
}
