package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
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
	// UID and Exe complete the identity (see ptyhost.ProcessInfo); Add
	// fills them in from the running process. An entry without Exe (from
	// an older shogun) never matches a process, so it is never acted on.
	UID int    `json:"uid"`
	Exe string `json:"exe"`
}

// maxLedger bounds what is read: a ledger lists one process per role.
const maxLedger = 1 << 20

// OpenLedger returns the ledger at path, starting empty.
func OpenLedger(path string) *Ledger {
	return &Ledger{path: path, entries: map[string]LedgerEntry{}}
}

// Leftovers reads the ledger file left by a previous supervisor, kills what
// is left of each process tree it lists, and returns the entries whose
// processes it killed. Only what this workspace's supervisor provably
// started is killed: the file must be a regular file owned by the running
// user and writable by nobody else, each entry must name a process of the
// running user, and ptyhost.KillLeftovers matches pid, start time, user and
// executable before it kills anything. Whatever is refused is returned as
// an error saying why, and nothing of it is killed.
func (l *Ledger) Leftovers() ([]LedgerEntry, error) {
	b, err := l.readTrusted()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var old []LedgerEntry
	if err := json.Unmarshal(b, &old); err != nil {
		// A torn write from a crash: nothing reliable to act on.
		return nil, fmt.Errorf("pid ledger %s is damaged, ignoring it: %w", l.path, err)
	}
	self := os.Geteuid()
	var killed []LedgerEntry
	var errs []error
	for _, e := range old {
		if e.UID != self {
			errs = append(errs, fmt.Errorf("pid ledger lists pid %d (role %q) of user %d, not of this supervisor's user %d: left alone", e.Pid, e.Role, e.UID, self))
			continue
		}
		found, err := ptyhost.KillLeftovers(ptyhost.ProcessInfo{Pid: e.Pid, Identity: e.Identity, UID: e.UID, Exe: e.Exe})
		if errors.Is(err, ptyhost.ErrOtherProcess) {
			errs = append(errs, fmt.Errorf("pid ledger entry of role %q does not match the running process, left alone: %w", e.Role, err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("kill leftover %s (pid %d): %w", e.Role, e.Pid, err))
		}
		if found {
			killed = append(killed, e)
		}
	}
	return killed, errors.Join(errs...)
}

// readTrusted reads the ledger file if it can only have been written by this
// user: a regular file (not a link to one), owned by the running user, not
// writable by group or others. Anyone else could list a stranger's process
// in it for the supervisor to kill.
func (l *Ledger) readTrusted() ([]byte, error) {
	lfi, err := os.Lstat(l.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read pid ledger: %w", err)
	}
	if !lfi.Mode().IsRegular() {
		return nil, fmt.Errorf("pid ledger %s is not a regular file (%s), ignoring it: nothing killed", l.path, lfi.Mode().Type())
	}
	f, err := os.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("read pid ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read pid ledger: %w", err)
	}
	if !os.SameFile(lfi, fi) {
		return nil, fmt.Errorf("pid ledger %s was replaced while being read, ignoring it: nothing killed", l.path)
	}
	if err := ownedByMe(fi); err != nil {
		return nil, fmt.Errorf("pid ledger %s %v, ignoring it: nothing killed", l.path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxLedger+1))
	if err != nil {
		return nil, fmt.Errorf("read pid ledger: %w", err)
	}
	if len(b) > maxLedger {
		return nil, fmt.Errorf("pid ledger %s is over %d bytes, ignoring it: nothing killed", l.path, maxLedger)
	}
	return b, nil
}

// Add records a started process. The user and executable are read from the
// running process when the entry does not carry them.
func (l *Ledger) Add(e LedgerEntry) error {
	if e.Exe == "" {
		if info, err := ptyhost.Inspect(e.Pid); err == nil && info.Identity == e.Identity {
			e.UID, e.Exe = info.UID, info.Exe
		} else {
			e.UID = os.Geteuid()
		}
	}
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
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("write pid ledger: %w", err)
	}
	// Owner-only: a ledger others could write would let them name processes
	// for the next start to kill. Unsynced: it is rewritten at every start
	// and exit, and after a restart of the machine it names no process.
	if err := atomicfile.WriteUnsynced(l.path, b, 0o600); err != nil {
		return fmt.Errorf("pid ledger: %w", err)
	}
	return nil
}
