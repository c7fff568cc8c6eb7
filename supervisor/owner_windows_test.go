package supervisor

import (
	"os"
	"path/filepath"
	"testing"
)

// On Windows the workspace's ACLs decide who may write its runtime state:
// the ledger takes a file there as its own.
func TestLedgerFileIsOwnedOnWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pids.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ownedByMe(fi); err != nil {
		t.Errorf("ownedByMe(%s) = %v, want nil", path, err)
	}
}
