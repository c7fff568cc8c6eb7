package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The skill-mining state (package skills) is kept in skill_state as keyed
// blobs whose encoding the skills package owns; this file gives it the
// reads and writes it needs, in one snapshot (MineView) or one write
// transaction (MineTx), and the reads of the history a scan makes.

// MineView reads the history and the mining state in one snapshot.
type MineView struct {
	q     queryer
	stmts map[string]*sql.Stmt // prepared on a read transaction, by text
	tx    *sql.Tx              // the read transaction, when there is one
}

// MineTx is a write transaction on the mining state and the skill
// candidates. It reads what it wrote.
type MineTx struct {
	MineView
	w *writeTx
}

// ViewMine runs fn on one read snapshot of the database (a read-only
// transaction): a long scan sees the history as it was when it began while
// the supervisor goes on writing.
func (s *Store) ViewMine(fn func(*MineView) error) error {
	tx, err := s.r.Begin()
	if err != nil {
		return fmt.Errorf("read mining state: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to keep
	v := &MineView{q: tx, tx: tx, stmts: map[string]*sql.Stmt{}}
	defer v.closeStmts()
	return fn(v)
}

// UpdateMine runs fn in one write transaction, committing if it succeeds.
func (s *Store) UpdateMine(fn func(*MineTx) error) error {
	return s.write(func(tx *writeTx) error {
		return fn(&MineTx{MineView: MineView{q: tx}, w: tx})
	})
}

func (v *MineView) closeStmts() {
	for _, st := range v.stmts {
		st.Close()
	}
}

// query runs a query, prepared once per read transaction.
func (v *MineView) query(q string, args ...any) (*sql.Rows, error) {
	if v.tx != nil {
		st, ok := v.stmts[q]
		if !ok {
			var err error
			if st, err = v.tx.Prepare(q); err != nil {
				return nil, err
			}
			v.stmts[q] = st
		}
		return st.Query(args...)
	}
	return v.q.Query(q, args...)
}

func (v *MineView) queryRow(q string, args ...any) *sql.Row {
	if v.tx != nil {
		st, ok := v.stmts[q]
		if !ok {
			st, err := v.tx.Prepare(q)
			if err != nil {
				return v.tx.QueryRow(q, args...) // reports the same error on Scan
			}
			v.stmts[q] = st
			return st.QueryRow(args...)
		}
		return st.QueryRow(args...)
	}
	return v.q.QueryRow(q, args...)
}

// Get returns the value of key in the mining state.
func (v *MineView) Get(key []byte) ([]byte, bool, error) {
	var val []byte
	err := v.queryRow(`SELECT v FROM skill_state WHERE k = ?`, key).Scan(&val)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("mining state: %w", err)
	}
	return val, true, nil
}

// getBatch is how many keys GetMany asks for in one query.
const getBatch = 200

// GetMany calls fn with every key of keys that has a value, in no
// particular order. The slices passed to fn are its own.
func (v *MineView) GetMany(keys [][]byte, fn func(key, val []byte)) error {
	for start := 0; start < len(keys); start += getBatch {
		part := keys[start:min(len(keys), start+getBatch)]
		q := `SELECT k, v FROM skill_state WHERE k IN (?` + strings.Repeat(",?", len(part)-1) + `)`
		args := make([]any, len(part))
		for i, k := range part {
			args[i] = k
		}
		rows, err := v.query(q, args...)
		if err != nil {
			return fmt.Errorf("mining state: %w", err)
		}
		for rows.Next() {
			var k, val []byte
			if err := rows.Scan(&k, &val); err != nil {
				rows.Close()
				return fmt.Errorf("mining state: %w", err)
			}
			fn(k, val)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("mining state: %w", err)
		}
	}
	return nil
}

// Range calls fn with the keys in [from, to) and their values, ascending,
// or descending when reverse is set, until fn returns false. A nil to
// means no upper bound. The slices passed to fn are reused: copy to keep.
func (v *MineView) Range(from, to []byte, reverse bool, fn func(key, val []byte) bool) error {
	q := `SELECT k, v FROM skill_state WHERE k >= ?`
	args := []any{from}
	if to != nil {
		q += ` AND k < ?`
		args = append(args, to)
	}
	if reverse {
		q += ` ORDER BY k DESC`
	} else {
		q += ` ORDER BY k`
	}
	rows, err := v.query(q, args...)
	if err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, val sql.RawBytes
		if err := rows.Scan(&k, &val); err != nil {
			return fmt.Errorf("mining state: %w", err)
		}
		if !fn(k, val) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	return nil
}

// Put sets key to val.
func (t *MineTx) Put(key, val []byte) error {
	if _, err := t.w.Exec(`INSERT INTO skill_state (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, key, val); err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	return nil
}

// Delete removes key.
func (t *MineTx) Delete(key []byte) error {
	if _, err := t.w.Exec(`DELETE FROM skill_state WHERE k = ?`, key); err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	return nil
}

// DeleteRange removes the keys in [from, to); a nil to means no upper
// bound.
func (t *MineTx) DeleteRange(from, to []byte) error {
	q, args := `DELETE FROM skill_state WHERE k >= ?`, []any{from}
	if to != nil {
		q, args = q+` AND k < ?`, append(args, to)
	}
	if _, err := t.w.Exec(q, args...); err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	return nil
}

// ReplaceRange makes the keys in [from, to) exactly the ones kv yields,
// which must ascend; a nil to means no upper bound. It is the write of a
// rebuilt state, and writes only what differs from the state as it was:
// a rebuild that finds the state it replaces writes next to nothing (a
// long history's state is hundreds of megabytes, and every page written
// goes to the log and then to the file).
func (t *MineTx) ReplaceRange(from, to []byte, kv func(yield func(key, val []byte) error) error) error {
	return t.replaceRange(from, to, replaceBatch, kv)
}

// replaceBatch is how many keys of the old state ReplaceRange reads at
// a time.
const replaceBatch = 256

// replaceRange is ReplaceRange reading the old state batch keys at a
// time (tests force small batches).
func (t *MineTx) replaceRange(from, to []byte, batch int, kv func(yield func(key, val []byte) error) error) error {
	put, err := t.w.Tx.Prepare(`INSERT INTO skill_state (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`)
	if err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	defer put.Close()
	del, err := t.w.Tx.Prepare(`DELETE FROM skill_state WHERE k = ?`)
	if err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	defer del.Close()
	old := &oldKeys{tx: t, after: bytes.Clone(from), to: to, first: true, batch: batch}
	var last []byte
	err = kv(func(key, val []byte) error {
		if last != nil && bytes.Compare(key, last) <= 0 {
			return fmt.Errorf("keys out of order: %x after %x", key, last)
		}
		if bytes.Compare(key, from) < 0 || to != nil && bytes.Compare(key, to) >= 0 {
			return fmt.Errorf("key %x out of [%x, %x)", key, from, to)
		}
		last = append(last[:0], key...)
		for {
			k, v, ok, err := old.head()
			if err != nil {
				return err
			}
			c := 1 // no old key left: key is new
			if ok {
				c = bytes.Compare(k, key)
			}
			switch {
			case c < 0: // gone from the new state
				if _, err := del.Exec(k); err != nil {
					return err
				}
				old.pop()
				continue
			case c == 0:
				old.pop()
				if bytes.Equal(v, val) {
					return nil
				}
			}
			_, err = put.Exec(key, val)
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("mining state: %w", err)
	}
	// What is left of the old state is not in the new one. Every key
	// written is below the first left (the old keys are read before a
	// key above them is written).
	if k, _, ok, err := old.head(); err != nil {
		return fmt.Errorf("mining state: %w", err)
	} else if ok {
		if err := t.DeleteRange(k, to); err != nil {
			return err
		}
	}
	return nil
}

// oldKeys reads the old state, in order, a batch at a time, for
// ReplaceRange.
type oldKeys struct {
	tx    *MineTx
	after []byte // the last key read (or the first to read, while first)
	to    []byte // the end of the range, nil for none
	first bool
	done  bool // no key after the batch
	batch int
	buf   []byte // the batch's keys and values, one after the other
	ends  []int  // where each key and each value ends in buf
	next  int    // the first entry of the batch not yet taken
}

// head is the first old key not yet taken, and its value; ok is false
// when there is none. It reads the next batch when the last is taken:
// before any key past the batch is written, so the batch holds only old
// keys.
func (o *oldKeys) head() (k, v []byte, ok bool, err error) {
	if o.next == len(o.ends)/2 && !o.done {
		if err := o.read(); err != nil {
			return nil, nil, false, err
		}
	}
	if o.next == len(o.ends)/2 {
		return nil, nil, false, nil
	}
	i := 2 * o.next
	start := 0
	if i > 0 {
		start = o.ends[i-1]
	}
	return o.buf[start:o.ends[i]], o.buf[o.ends[i]:o.ends[i+1]], true, nil
}

func (o *oldKeys) read() error {
	q, args := `SELECT k, v FROM skill_state WHERE k > ?`, []any{o.after}
	if o.first {
		q = `SELECT k, v FROM skill_state WHERE k >= ?`
	}
	if o.to != nil {
		q, args = q+` AND k < ?`, append(args, o.to)
	}
	rows, err := o.tx.w.Query(q+` ORDER BY k LIMIT ?`, append(args, o.batch)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	o.buf, o.ends, o.next = o.buf[:0], o.ends[:0], 0
	for rows.Next() {
		var k, v sql.RawBytes
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		o.buf = append(o.buf, k...)
		o.ends = append(o.ends, len(o.buf))
		o.buf = append(o.buf, v...)
		o.ends = append(o.ends, len(o.buf))
		o.after, o.first = append(o.after[:0], k...), false
	}
	if err := rows.Err(); err != nil {
		return err
	}
	o.done = len(o.ends)/2 < o.batch
	return nil
}

func (o *oldKeys) pop() { o.next++ }

// Watch makes the trigger on tasks record status changes of the tasks up
// to seq in skill_changes: the ones the mining state now covers.
func (t *MineTx) Watch(seq int64) error {
	if _, err := t.w.Exec(`INSERT INTO skill_watch (one, seq) VALUES (1, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq`, seq); err != nil {
		return fmt.Errorf("watch tasks: %w", err)
	}
	return nil
}

// Changes returns the tasks (by seq, without repeats, ascending) whose
// status changed since the mining state covered them, and the id of the
// last change, for DeleteChanges.
func (v *MineView) Changes() (seqs []int64, last int64, err error) {
	rows, err := v.query(`SELECT id, seq FROM skill_changes ORDER BY seq, id`)
	if err != nil {
		return nil, 0, fmt.Errorf("changed tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, 0, fmt.Errorf("changed tasks: %w", err)
		}
		last = max(last, id)
		if n := len(seqs); n == 0 || seqs[n-1] != seq {
			seqs = append(seqs, seq)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("changed tasks: %w", err)
	}
	return seqs, last, nil
}

// LastChange is the id of the latest recorded change, 0 if none.
func (v *MineView) LastChange() (int64, error) {
	var id int64
	if err := v.queryRow(`SELECT COALESCE(MAX(id), 0) FROM skill_changes`).Scan(&id); err != nil {
		return 0, fmt.Errorf("changed tasks: %w", err)
	}
	return id, nil
}

// DeleteChanges forgets the changes up to id upto, once mined.
func (t *MineTx) DeleteChanges(upto int64) error {
	if _, err := t.w.Exec(`DELETE FROM skill_changes WHERE id <= ?`, upto); err != nil {
		return fmt.Errorf("changed tasks: %w", err)
	}
	return nil
}

// MaxSeq returns the highest seq of the tasks, 0 if there are none.
func (v *MineView) MaxSeq() (int64, error) {
	var seq int64
	if err := v.queryRow(`SELECT COALESCE(MAX(seq), 0) FROM tasks`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("count tasks: %w", err)
	}
	return seq, nil
}

// TaskCount returns the number of tasks and the highest seq. It does not
// count the finished ones: that read every task's status, a quarter of a
// second at a million, while the tasks' smallest index counts them all.
func (v *MineView) TaskCount() (all int, maxSeq int64, err error) {
	err = v.queryRow(`SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM tasks`).Scan(&all, &maxSeq)
	if err != nil {
		return 0, 0, fmt.Errorf("count tasks: %w", err)
	}
	return all, maxSeq, nil
}

// MineTask is a task as mining first reads it: whatever its status, with
// the text its tokens come from. Title, Body and Tags (the JSON list) are
// strings of its own, straight from the driver: a full scan reads a
// million of them and keeps them while they are tokenised, and a copy of
// each would double what it allocates.
type MineTask struct {
	Seq        int64
	ID, Role   string
	Status     string
	FinishedAt time.Time
	Title      string
	Body       string
	Tags       string
	// Root is the first task of the task's chain of commands when that is
	// another task (the order a karo split, for its parts); "" when the
	// task is the first of its chain. EachTask and EachStoredTask fill it.
	Root string
}

// mineTaskColumns are what EachTask and EachStoredTask read of a task; the
// root only when it is another task, so that the common case reads "".
const mineTaskColumns = `seq, id, role_id, status, finished_at, title, body, tags,
CASE WHEN root_id = id THEN '' ELSE root_id END`

// EachTask calls fn with every task whose seq is in (after, upto], in seq
// order.
func (v *MineView) EachTask(after, upto int64, fn func(*MineTask) error) error {
	return v.eachTask(`SELECT `+mineTaskColumns+` FROM tasks
WHERE seq > ? AND seq <= ? ORDER BY seq`, after, upto, fn)
}

// ErrNotInSeqOrder is EachStoredTask's error when the tasks are not stored
// in seq order.
var ErrNotInSeqOrder = errors.New("read tasks: not stored in seq order")

// EachStoredTask is EachTask reading the tasks in the order they are
// stored, which is seq order as tasks are added: without a lookup of each
// task through the seq index, a tenth less of SQLite's work over a long
// history. It returns ErrNotInSeqOrder, having given fn the tasks before,
// as soon as a task comes after one with a higher seq; EachTask reads
// such a table.
func (v *MineView) EachStoredTask(after, upto int64, fn func(*MineTask) error) error {
	last := after
	return v.eachTask(`SELECT `+mineTaskColumns+` FROM tasks NOT INDEXED
WHERE seq > ? AND seq <= ?`, after, upto, func(t *MineTask) error {
		if t.Seq <= last {
			return ErrNotInSeqOrder
		}
		last = t.Seq
		return fn(t)
	})
}

func (v *MineView) eachTask(q string, after, upto int64, fn func(*MineTask) error) error {
	rows, err := v.query(q, after, upto)
	if err != nil {
		return fmt.Errorf("read tasks: %w", err)
	}
	defer rows.Close()
	var (
		t        MineTask
		finished sql.NullString
	)
	for rows.Next() {
		if err := rows.Scan(&t.Seq, &t.ID, &t.Role, &t.Status, &finished, &t.Title, &t.Body, &t.Tags, &t.Root); err != nil {
			return fmt.Errorf("read tasks: %w", err)
		}
		if t.FinishedAt, err = parseTime(finished); err != nil {
			return fmt.Errorf("read tasks: task %s: %w", t.ID, err)
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read tasks: %w", err)
	}
	return nil
}

// TaskStatuses returns the tasks with the given seqs, by seq; their Title,
// Body and Tags are their own.
func (v *MineView) TaskStatuses(seqs []int64) (map[int64]MineTask, error) {
	out := make(map[int64]MineTask, len(seqs))
	for start := 0; start < len(seqs); start += getBatch {
		part := seqs[start:min(len(seqs), start+getBatch)]
		rows, err := v.query(`SELECT seq, id, role_id, status, finished_at, title, tags FROM tasks WHERE seq IN (?`+
			strings.Repeat(",?", len(part)-1)+`)`, int64Args(part)...)
		if err != nil {
			return nil, fmt.Errorf("read tasks: %w", err)
		}
		for rows.Next() {
			var (
				t        MineTask
				finished sql.NullString
			)
			if err := rows.Scan(&t.Seq, &t.ID, &t.Role, &t.Status, &finished, &t.Title, &t.Tags); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read tasks: %w", err)
			}
			if t.FinishedAt, err = parseTime(finished); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read tasks: task %s: %w", t.ID, err)
			}
			out[t.Seq] = t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read tasks: %w", err)
		}
	}
	return out, nil
}

func int64Args(s []int64) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Proposal is the skill an agent proposed in a task's last report.
type Proposal struct {
	Name, Description string
}

// Proposals returns the skills proposed by the last reports of the tasks
// with the given seqs (those whose last report proposed none are left
// out).
func (v *MineView) Proposals(seqs []int64) (map[int64]Proposal, error) {
	out := map[int64]Proposal{}
	last := map[int64]int64{}
	for start := 0; start < len(seqs); start += getBatch {
		part := seqs[start:min(len(seqs), start+getBatch)]
		rows, err := v.query(`SELECT t.seq, r.id, r.skill_name, r.skill_description FROM tasks t
JOIN reports r ON r.task_id = t.id WHERE t.seq IN (?`+strings.Repeat(",?", len(part)-1)+`)`, int64Args(part)...)
		if err != nil {
			return nil, fmt.Errorf("read proposals: %w", err)
		}
		for rows.Next() {
			var (
				seq, id int64
				p       Proposal
			)
			if err := rows.Scan(&seq, &id, &p.Name, &p.Description); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read proposals: %w", err)
			}
			if prev, ok := last[seq]; ok && prev > id {
				continue
			}
			last[seq] = id
			if p.Name == "" {
				delete(out, seq)
			} else {
				out[seq] = p
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read proposals: %w", err)
		}
	}
	return out, nil
}

// AllProposals calls fn with every task (up to seq upto) whose last report
// proposed a skill, through the index of the few reports that do.
func (v *MineView) AllProposals(upto int64, fn func(seq int64, p Proposal) error) error {
	rows, err := v.query(`SELECT t.seq, r.id, r.skill_name, r.skill_description,
(SELECT MAX(r2.id) FROM reports r2 WHERE r2.task_id = r.task_id)
FROM reports r INDEXED BY reports_skill JOIN tasks t ON t.id = r.task_id
WHERE r.skill_name != '' AND t.seq <= ?`, upto)
	if err != nil {
		return fmt.Errorf("read proposals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq, id, last int64
			p             Proposal
		)
		if err := rows.Scan(&seq, &id, &p.Name, &p.Description, &last); err != nil {
			return fmt.Errorf("read proposals: %w", err)
		}
		if id != last {
			continue
		}
		if err := fn(seq, p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read proposals: %w", err)
	}
	return nil
}

// SampleTasks returns the finished tasks with the given seqs, with their
// last reports, in the order of seqs: the texts a candidate is distilled
// from.
func (v *MineView) SampleTasks(seqs []int64) ([]FinishedTask, error) {
	bySeq := make(map[int64]*FinishedTask, len(seqs))
	byID := make(map[string]*FinishedTask, len(seqs))
	lastReport := map[string]int64{}
	for start := 0; start < len(seqs); start += getBatch {
		part := seqs[start:min(len(seqs), start+getBatch)]
		in := `(?` + strings.Repeat(",?", len(part)-1) + `)`
		rows, err := v.query(`SELECT seq, id, role_id, title, body, tags, status, created_at, finished_at, summary
FROM tasks WHERE seq IN `+in, int64Args(part)...)
		if err != nil {
			return nil, fmt.Errorf("read sample tasks: %w", err)
		}
		for rows.Next() {
			var (
				t                 FinishedTask
				tags              string
				created, finished sql.NullString
			)
			if err := rows.Scan(&t.Seq, &t.ID, &t.Role, &t.Title, &t.Body, &tags, &t.Status, &created, &finished, &t.Summary); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read sample tasks: %w", err)
			}
			if t.Tags, err = decodeList(tags); err == nil {
				if t.CreatedAt, err = parseTime(created); err == nil {
					t.FinishedAt, err = parseTime(finished)
				}
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read sample tasks: task %s: %w", t.ID, err)
			}
			t.Files = []string{}
			bySeq[t.Seq] = &t
			byID[t.ID] = &t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read sample tasks: %w", err)
		}
		ids := make([]any, 0, len(part))
		for _, s := range part {
			if t, ok := bySeq[s]; ok {
				ids = append(ids, t.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		rows, err = v.query(`SELECT task_id, id, summary, details, files, skill_name, skill_description FROM reports
WHERE task_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, ids...)
		if err != nil {
			return nil, fmt.Errorf("read sample reports: %w", err)
		}
		for rows.Next() {
			var (
				taskID, summary, details, files, skill, doc string
				id                                          int64
			)
			if err := rows.Scan(&taskID, &id, &summary, &details, &files, &skill, &doc); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read sample reports: %w", err)
			}
			t := byID[taskID]
			if prev, ok := lastReport[taskID]; t == nil || (ok && prev > id) {
				continue
			}
			lastReport[taskID] = id
			t.Summary, t.Details, t.SkillName, t.SkillDescription = summary, details, skill, doc
			if t.Files, err = decodeList(files); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read sample reports: task %s: files: %w", taskID, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read sample reports: %w", err)
		}
	}
	out := make([]FinishedTask, 0, len(seqs))
	for _, s := range seqs {
		t, ok := bySeq[s]
		if !ok {
			return nil, fmt.Errorf("read sample tasks: no task with seq %d", s)
		}
		out = append(out, *t)
	}
	return out, nil
}
