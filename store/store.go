// Package store owns a workspace's history, the SQLite database
// data/shogun.db: runs, roles, the commands and the tasks made from them,
// reports, agent logs, events, the skill tables, and the full-text index
// that makes the tasks searchable (search.go). The task queue itself
// lives here too, so that a command file becomes exactly one task and a
// report closes exactly one task, even across crashes.
//
// A Store has one writer connection, so every write is serialised in this
// process and numbering (task ids, sequence numbers) needs no further
// locking, and a separate read-only pool, so that status queries never wait
// behind a write and can never write by mistake.
package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Sentinel errors, for errors.Is; the returned errors wrap them with the
// operation and the task.
var (
	// ErrUnknownTask means no task has the given id.
	ErrUnknownTask = errors.New("unknown task")
	// ErrTaskClosed means the task is already done, failed, blocked or
	// cancelled; a closed task is never reopened, so a late or repeated
	// report cannot close it twice.
	ErrTaskClosed = errors.New("task already closed")
	// ErrNotAssigned means a delivery was recorded for a task that is still
	// queued: the dispatcher must Assign before it types the nudge.
	ErrNotAssigned = errors.New("task not assigned")
	// ErrRoleBusy means the role already has another task in flight; a role
	// works on one task at a time.
	ErrRoleBusy = errors.New("role has a task in flight")
	// ErrNewerSchema means the database was written by a newer shogun. It is
	// refused rather than used, since an older binary cannot know what the
	// newer migrations mean and must not silently undo them.
	ErrNewerSchema = errors.New("database schema is newer than this shogun")
)

// Store is an open history database. Its methods are safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the single writer
	r    *sql.DB // read-only pool

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // prepared on w, by query text; nil once closed
	rstmts map[string]*sql.Stmt // prepared on r (reads), by query text; nil once closed

	opened os.FileInfo // the database file as opened, for CheckFile

	changes changes // closed after each committed write (Changed)
}

// readers is the size of the read pool: enough for the dashboard, the
// status file and a CLI query to run side by side.
const readers = 4

// Open opens the database at path, creating it and its folder if needed,
// and brings its schema up to date. The history holds every task's body, so
// a folder it creates is owner-only (0700), and the database and its -wal
// and -shm files are made owner-only (0600) before SQLite opens them,
// whatever the umask (privateFiles). A history from before the search index
// is indexed here, which takes a while for a large one (about a minute per
// million tasks): WithProgress reports how far it has come, WithContext
// lets it be interrupted.
func Open(path string, opts ...Option) (*Store, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := privateFiles(abs); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: abs, stmts: map[string]*sql.Stmt{}, rstmts: map[string]*sql.Stmt{}}

	// The writer comes first: it creates the file, switches it to WAL and
	// migrates, all of which a read-only connection could not do.
	s.w, err = sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := migrate(s.w); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	s.r, err = sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(readers)
	s.r.SetMaxIdleConns(readers)
	if err := s.r.Ping(); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: read pool: %w", path, err)
	}
	if s.opened, err = os.Stat(abs); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.backfillSearch(o); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// privateFiles makes the database at path and its -wal and -shm files
// readable and writable by their owner only, whatever the umask: it creates
// the database file 0600 before SQLite opens it (SQLite gives the -wal and
// -shm files it creates the database file's permissions, on Unix), and
// takes group and other permissions off the files of a history that an
// older shogun created under the usual umask (0644). On Windows a file's
// mode does not say who may read it (the folder's access list does), so it
// does nothing there.
func privateFiles(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrExist):
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("make the history owner-only: %w", err)
		}
	}
	return nil
}

// Peek reads, without changing the database at path, its schema version
// and whether it records a run of process pid as running. A supervisor
// records its run once it has opened the database, after migrating it to
// its own version; so a running run at a version older than SchemaVersion
// is an older shogun that still has the database open, and Open, which
// would migrate it, must wait until that one stops (see cmd/shogun).
func Peek(path string, pid int) (version int, running bool, err error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer db.Close()
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	if version == 0 {
		return 0, false, nil // new: no tables yet
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM runs WHERE status = ? AND pid = ?`, RunRunning, pid).Scan(&n); err != nil {
		return version, false, fmt.Errorf("read %s: %w", path, err)
	}
	return version, n > 0, nil
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes both pools. The last connection to close checkpoints the WAL
// into the database file.
func (s *Store) Close() error {
	var errs []error
	s.mu.Lock()
	stmts, rstmts := s.stmts, s.rstmts
	s.stmts, s.rstmts = nil, nil
	s.mu.Unlock()
	// Closed unlocked: closing waits for the statement's queries, and a
	// query may want the lock to prepare another.
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range rstmts {
		errs = append(errs, st.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// dsn is the modernc.org/sqlite data source name for path. Every connection
// waits up to 5 s for a lock instead of failing at once (another shogun
// process, such as `shogun status`, may hold it), uses WAL so readers never
// block the writer, syncs at commit boundaries only (NORMAL is durable
// enough in WAL mode: a power cut can lose the last commits, never corrupt),
// and enforces foreign keys, which SQLite leaves off by default.
func dsn(path string, readOnly bool) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		// A Windows drive path (C:/...) must read file:/C:/... in a URI.
		p = "/" + p
	}
	// Characters that would end the path part of the URI.
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	q := "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	if readOnly {
		// mode=ro makes SQLite itself refuse writes on these connections.
		q = "mode=ro&" + q
	} else {
		// BEGIN IMMEDIATE takes the write lock up front; a deferred
		// transaction that reads and then writes would fail with
		// SQLITE_BUSY, without waiting, if another process wrote meanwhile.
		q += "&_txlock=immediate"
	}
	return "file:" + p + "?" + q
}

// write runs fn in a transaction on the writer, committing if fn succeeds.
func (s *Store) write(fn func(tx *writeTx) error) error {
	tx, err := s.w.Begin()
	if err != nil {
		return err
	}
	wtx := &writeTx{Tx: tx, s: s}
	err = fn(wtx)
	if err != nil {
		_ = tx.Rollback()
	} else if err = tx.Commit(); err == nil {
		s.changes.signal()
	}
	// Now that the connection is free again, prepare what this transaction
	// had to run unprepared; preparing during it would wait on the very
	// connection it holds.
	s.prepare(wtx.misses)
	return err
}

// writeTx is a write transaction that reuses statements prepared on the
// writer: parsing SQL was most of the cost of recording a command.
type writeTx struct {
	*sql.Tx
	s      *Store
	misses []string // queries not prepared yet
}

// stmt returns the transaction's copy of the prepared statement for query,
// or nil the first time query is seen.
func (tx *writeTx) stmt(query string) *sql.Stmt {
	tx.s.mu.Lock()
	st := tx.s.stmts[query]
	tx.s.mu.Unlock()
	if st == nil {
		tx.misses = append(tx.misses, query)
		return nil
	}
	// The writer has one connection, on which st is already prepared.
	return tx.Stmt(st)
}

// Exec is sql.Tx.Exec with a prepared statement when there is one.
func (tx *writeTx) Exec(query string, args ...any) (sql.Result, error) {
	if st := tx.stmt(query); st != nil {
		return st.Exec(args...)
	}
	return tx.Tx.Exec(query, args...)
}

// QueryRow is sql.Tx.QueryRow with a prepared statement when there is one.
func (tx *writeTx) QueryRow(query string, args ...any) *sql.Row {
	if st := tx.stmt(query); st != nil {
		return st.QueryRow(args...)
	}
	return tx.Tx.QueryRow(query, args...)
}

// Query is sql.Tx.Query with a prepared statement when there is one.
func (tx *writeTx) Query(query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmt(query); st != nil {
		return st.Query(args...)
	}
	return tx.Tx.Query(query, args...)
}

// prepare prepares queries on the writer for later transactions. It must
// not be called while holding the writer's connection.
func (s *Store) prepare(queries []string) {
	for _, q := range queries {
		s.mu.Lock()
		_, done := s.stmts[q]
		closed := s.stmts == nil
		s.mu.Unlock()
		if done || closed {
			continue
		}
		st, err := s.w.Prepare(q)
		if err != nil {
			continue // the query keeps running unprepared, and reports its error there
		}
		s.mu.Lock()
		if _, done := s.stmts[q]; done || s.stmts == nil {
			st.Close()
		} else {
			s.stmts[q] = st
		}
		s.mu.Unlock()
	}
}

// read is the read pool, with each query prepared the first time it runs
// and reused after: the supervisor asks the same few questions (a role's
// task in flight, its next one, the queue depths) many times a second,
// and parsing their SQL each time was a tenth of its CPU (bench: many
// roles, few slots).
func (s *Store) read() queryer { return reader{s} }

// reader is the read pool with prepared statements (Store.read).
type reader struct{ s *Store }

// maxReadStmts bounds the prepared reads: a query built from filters has a
// text for each combination of them, and texts beyond the bound run
// unprepared. (A query with a list of values, a text for each length of
// the list, goes to the pool unprepared.)
const maxReadStmts = 128

// stmt returns the statement prepared on the read pool for query, preparing
// it if need be; nil when it cannot (closed, the bound reached, or an error
// the query itself will report).
func (rd reader) stmt(query string) *sql.Stmt {
	s := rd.s
	s.mu.Lock()
	st, full := s.rstmts[query], s.rstmts == nil || len(s.rstmts) >= maxReadStmts
	s.mu.Unlock()
	if st != nil || full {
		return st
	}
	st, err := s.r.Prepare(query)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept := s.rstmts[query]; kept != nil || s.rstmts == nil {
		st.Close()
		return kept
	}
	s.rstmts[query] = st
	return st
}

// QueryRow is sql.DB.QueryRow on the read pool, prepared.
func (rd reader) QueryRow(query string, args ...any) *sql.Row {
	if st := rd.stmt(query); st != nil {
		return st.QueryRow(args...)
	}
	return rd.s.r.QueryRow(query, args...)
}

// Query is sql.DB.Query on the read pool, prepared.
func (rd reader) Query(query string, args ...any) (*sql.Rows, error) {
	if st := rd.stmt(query); st != nil {
		return st.Query(args...)
	}
	return rd.s.r.Query(query, args...)
}

// queryer is what the scan helpers need from a *sql.DB or a *sql.Tx, so the
// same query serves reads on the pool and reads inside a write.
type queryer interface {
	QueryRow(query string, args ...any) *sql.Row
	Query(query string, args ...any) (*sql.Rows, error)
}

// Times are stored as RFC 3339 text in UTC so that the database reads the
// same with the sqlite3 shell as through this package.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// nullTime stores the zero time as NULL: "never happened", not year 1.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q: %w", s.String, err)
	}
	return t, nil
}
