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
