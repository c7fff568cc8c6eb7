package store

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

func TestCheckFileNoticesADeletedOrReplacedDatabase(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows refuses to delete or rename a database file the supervisor has open")
	}
	s, _ := workspace(t)
	if err := s.CheckFile(); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	if err := os.Rename(s.Path(), s.Path()+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckFile(); !errors.Is(err, ErrDatabaseGone) {
		t.Errorf("after a move: %v, want ErrDatabaseGone", err)
	}
	if err := os.WriteFile(s.Path(), []byte("another file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckFile(); !errors.Is(err, ErrDatabaseGone) {
		t.Errorf("after a replacement: %v, want ErrDatabaseGone", err)
	}
}

func TestSeedTaskNumbersOnlyRaisesCounters(t *testing.T) {
	s, run := workspace(t)
	accept(t, s, command(run, "a.yaml", "a", "ashigaru1")) // t-20261122-0001
	if err := s.SeedTaskNumbers(map[string]int64{"20261122": 41}); err != nil {
		t.Fatal(err)
	}
	if err := s.SeedTaskNumbers(map[string]int64{"20261122": 7}); err != nil {
		t.Fatal(err)
	}
	res := accept(t, s, command(run, "b.yaml", "b", "ashigaru1"))
	if got := res[0].Task.ID; got != "t-20261122-0042" {
		t.Errorf("next task id = %s, want t-20261122-0042", got)
	}
}

// Peek reads the schema version and whether a process's run is running,
// and changes nothing.
func TestPeek(t *testing.T) {
	s, run := workspace(t) // a run of pid 4242, running
	for _, tc := range []struct {
		pid     int
		running bool
	}{{4242, true}, {4343, false}} {
		v, running, err := Peek(s.Path(), tc.pid)
		if err != nil || v != SchemaVersion || running != tc.running {
			t.Errorf("Peek(pid %d) = %d, %v, %v; want %d, %v", tc.pid, v, running, err, SchemaVersion, tc.running)
		}
	}
	if err := s.EndRun(run.ID, RunStopped, day); err != nil {
		t.Fatal(err)
	}
	if _, running, err := Peek(s.Path(), 4242); err != nil || running {
		t.Errorf("Peek after the run ended: %v, %v", running, err)
	}
}
