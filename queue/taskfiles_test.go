package queue

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The archived task file found is the latest copy of that task's, never
// another task's whose id starts alike.
func TestLatestArchivedTaskFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"w1-t-20261122-0001.yaml", "w1-t-20261122-0001-2.yaml", "w1-t-20261122-0001-3.yaml",
		"w1-t-20261122-00011.yaml", "w1-t-20261122-0001-x.yaml", "w2-t-20261122-0001-9.yaml",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := latestArchived(dir, "w1-t-20261122-0001")
	if err != nil || filepath.Base(got) != "w1-t-20261122-0001-3.yaml" {
		t.Errorf("latest = %s, %v", got, err)
	}
	if _, err := latestArchived(dir, "w1-t-20261122-0002"); err != ErrNoTaskFile {
		t.Errorf("a task without a file: %v", err)
	}
	if _, err := latestArchived(filepath.Join(dir, "none"), "w1"); err != ErrNoTaskFile {
		t.Errorf("no archive folder: %v", err)
	}
}

// A task file an agent replaced with a link is not followed, and a huge one
// is read only up to the bound.
func TestReadRegularRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("password"), 0o600); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "w1.yaml")
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
		if b, err := readAtMost(link, 100); err == nil {
			t.Errorf("a link was followed: %q", b)
		}
	}
	if b, err := readAtMost(dir, 100); err == nil {
		t.Errorf("a folder was read: %q", b)
	}
	if b, err := readAtMost(secret, 4); err != nil || string(b) != "pass" {
		t.Errorf("bounded read = %q, %v", b, err)
	}
}
