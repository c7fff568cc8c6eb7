package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"
)

// PruneResult says what Prune removed and what it cost the writer.
type PruneResult struct {
	Events, Logs int64 // rows removed
	Batches      int   // transactions that removed rows
	// MaxHold is the longest any batch held the writer, from taking the
	// write lock to its commit.
	MaxHold time.Duration
}

// PruneOptions tune Prune; the zero value is what the supervisor uses.
type PruneOptions struct {
	// MaxHold is what no batch may hold the writer for (default 50 ms).
	// Batches are sized to take a fifth of it, measured as they go, so
	// that a commit that also checkpoints the WAL, or a busy machine,
	// still keeps under it.
	MaxHold time.Duration
	// Pause is the gap between batches, in which other writers, in this
	// process or another, take their turn (default 10 ms).
	Pause time.Duration
	// OnBatch, when set, is told each batch's rows removed and how long
	// it held the writer (benchmarks).
	OnBatch func(rows int64, hold time.Duration)

	checkpoint func() // run between batches
}

// pruned are the tables Prune trims, each with the column that dates a
// row: a long-running workspace's events and log records. Tasks, reports
// and skills are the history itself and are kept.
var pruned = []struct{ table, at string }{
	{"events", "at"},
	{"logs", "created_at"},
}

// Prune removes the events and log records dated before the given time,
// oldest first, in batches of rows taken in rowid order (the order they
// were added in), each its own short transaction: a large backlog never
// holds the writer long, so the queue keeps recording tasks meanwhile. A
// table is done at the first batch with nothing to remove, since its rows
// were added in time order. ctx stops it between batches; what was removed
// stays removed.
func (s *Store) Prune(ctx context.Context, before time.Time, o PruneOptions) (PruneResult, error) {
	if o.MaxHold <= 0 {
		o.MaxHold = 50 * time.Millisecond
	}
	if o.Pause <= 0 {
		o.Pause = 10 * time.Millisecond
	}
	var res PruneResult
	// Deleting many rows fills the WAL, and the checkpoint that copies it
	// into the database (fsync included) would run inside a batch's
	// commit, on the writer. Meanwhile a connection of its own checkpoints
	// between batches instead: a passive checkpoint takes no write lock,
	// so the writer goes on recording work while it runs.
	ck, err := sql.Open("sqlite", dsn(s.path, false))
	if err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	defer ck.Close()
	ck.SetMaxOpenConns(1)
	if _, err := s.w.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	defer s.w.Exec(`PRAGMA wal_autocheckpoint = 1000`)
	o.checkpoint = func() { _, _ = ck.Exec(`PRAGMA wal_checkpoint(PASSIVE)`) }
	for _, p := range pruned {
		n, err := s.pruneTable(ctx, p.table, p.at, before, o, &res)
		switch p.table {
		case "events":
			res.Events += n
		case "logs":
			res.Logs += n
		}
		if err != nil {
			return res, fmt.Errorf("prune %s before %s: %w", p.table, before.UTC().Format(time.RFC3339), err)
		}
	}
	return res, nil
}

func (s *Store) pruneTable(ctx context.Context, table, at string, before time.Time, o PruneOptions, res *PruneResult) (int64, error) {
	cutoff := formatTime(before)
	// The batch's last rowid, then the old rows up to it: one range of
	// the rowid b-tree per batch, whatever the table's size.
	lastQ := fmt.Sprintf(`SELECT MAX(rowid) FROM (SELECT rowid FROM %s WHERE rowid > ? ORDER BY rowid LIMIT ?)`, table)
	delQ := fmt.Sprintf(`DELETE FROM %s WHERE rowid > ? AND rowid <= ? AND julianday(%s) < julianday(?)`, table, at)
	var (
		removed int64
		after   int64 // rowid cursor
		size    = int64(64)
	)
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		var n, last int64
		hold, err := s.writeTimed(func(tx *writeTx) error {
			var lastRow *int64
			if err := tx.QueryRow(lastQ, after, size).Scan(&lastRow); err != nil {
				return err
			}
			if lastRow == nil {
				return nil
			}
			last = *lastRow
			r, err := tx.Exec(delQ, after, last, cutoff)
			if err != nil {
				return err
			}
			n, err = r.RowsAffected()
			return err
		})
		if err != nil {
			return removed, err
		}
		res.MaxHold = max(res.MaxHold, hold)
		if n == 0 {
			return removed, nil // the end of the table, or past the cutoff
		}
		if o.OnBatch != nil {
			o.OnBatch(n, hold)
		}
		removed += n
		res.Batches++
		after = last
		size = nextBatch(size, n, hold, o.MaxHold/5)
		pause := time.Now()
		o.checkpoint()

		select {
		case <-ctx.Done():
		case <-time.After(o.Pause - time.Since(pause)):
		}
	}
}

// maxBatch bounds a pruning batch whatever the measured speed: a commit
// writes every page the batch changed to the WAL, and a large one is what
// makes the occasional checkpoint long.
const maxBatch = 1024

// nextBatch sizes the next batch from the last one, which removed n rows
// (of size asked) in took: the rows the target time holds at the speed
// measured, shrinking at once after a slow batch, growing at most twofold
// after a fast one, so one lucky batch does not make the next too big.
func nextBatch(size, n int64, took, target time.Duration) int64 {
	if n <= 0 || took <= 0 {
		return size
	}
	fit := int64(float64(n) * float64(target) / float64(took))
	return max(16, min(fit, 2*size, maxBatch))
}

// writeTimed is write, also returning how long the transaction held the
// writer: from BEGIN IMMEDIATE, which takes the write lock, to the end of
// COMMIT.
func (s *Store) writeTimed(fn func(tx *writeTx) error) (time.Duration, error) {
	var began time.Time
	err := s.write(func(tx *writeTx) error {
		began = time.Now()
		return fn(tx)
	})
	if began.IsZero() {
		return 0, err
	}
	return time.Since(began), err
}

// Vacuum compacts the database: the search index's segments are merged,
// then VACUUM rewrites the file without its free pages and the WAL is
// emptied into it. It needs the database to itself for as long as it
// runs (a minute or more for a large history), so the supervisor must not
// be running: the caller takes the workspace lock first. It returns the
// size of the database file (with its WAL) before and after.
func (s *Store) Vacuum() (before, after int64, err error) {
	before = s.fileSize()
	for _, q := range []string{
		`INSERT INTO task_search (task_search) VALUES ('optimize')`,
		`VACUUM`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := s.w.Exec(q); err != nil {
			return before, s.fileSize(), fmt.Errorf("vacuum %s: %s: %w", s.path, q, err)
		}
	}
	return before, s.fileSize(), nil
}

// fileSize is the size of the database file and its WAL, 0 if unknown.
func (s *Store) fileSize() int64 {
	var n int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
