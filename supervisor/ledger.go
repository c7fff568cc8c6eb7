package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// Ledger is the pid ledger in runtime/state/pids.json: every role process the
// supervisor started and has not yet seen end. After the supervisor is killed
// with -9 (no Pdeathsig outside Linux, and helpers that left the process
// group), the next start reads it and kills what is left.
type Ledger struct {
	path    string
	mu      sync.Mutex
	entries map[string]LedgerEntry
}

// LedgerEntry is one running role process.
type LedgerEntry struct {
	Role     string    `json:"role"`
	Pid      int       `json:"pid"`
	Identity string    `json:"identity"`
	Started  time.Time `json:"started"`
}

// OpenLedger returns the ledger at path, starting empty.
func OpenLedger(path string) *Ledger {
	return &Ledger{path: path, entries: map[string]LedgerEntry{}}
}

// Leftovers reads the ledger file left by a previous supervisor, kills what
// is left of each process tree it lists (see ptyhost.KillLeftovers: a reused
// pid is never killed), and returns the entries whose processes it killed.
func (l *Ledger) Leftovers() ([]LedgerEntry, error) {
	b, err := os.ReadFile(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pid ledger: %w", err)
	}
	var old []LedgerEntry
	if err := json.Unmarshal(b, &old); err != nil {
		// A torn write from a crash: nothing reliable to act on.
		return nil, fmt.Errorf("pid ledger %s is damaged, ignoring it: %w", l.path, err)
	}
	var killed []LedgerEntry
	var errs []error
	for _, e := range old {
		if e.Identity == "" {
			continue
		}
		found, err := ptyhost.KillLeftovers(e.Pid, e.Identity)
		if err != nil {
			errs = append(errs, fmt.Errorf("kill leftover %s (pid %d): %w", e.Role, e.Pid, err))
		}
		if found {
			killed = append(killed, e)
		}
	}
	return killed, errors.Join(errs...)
}

// Add records a started process.
func (l *Ledger) Add(e LedgerEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[e.Role] = e
	return l.save()
}

// Remove forgets the role's process once its tree is gone.
func (l *Ledger) Remove(role string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, role)
	return l.save()
}

// Clear removes the ledger file once every process it listed is gone.
func (l *Ledger) Clear() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = map[string]LedgerEntry{}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove pid ledger: %w", err)
	}
	return nil
}

// save writes the ledger atomically: a crash leaves the old or the new file.
func (l *Ledger) save() error {
	list := make([]LedgerEntry, 0, len(l.entries))
	for _, e := range l.entries {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Role < list[j].Role })
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(l.path, b); err != nil {
		return fmt.Errorf("write pid ledger: %w", err)
	}
	return nil
}

// writeFileAtomic writes b to a temporary file beside path and renames it
// over path, so readers see the old or the new content, never a part.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
