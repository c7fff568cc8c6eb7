package store

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A candidate's source tasks are kept in skill_candidate_sources, in
// chunks of up to sourceChunk tasks by seq, so that a large group gaining a
// task rewrites one chunk, not the whole list.

// SourceRef is a source task of a candidate: its seq (arrival order) and
// id.
type SourceRef struct {
	Seq int64
	ID  string
}

const sourceChunk = 512

// appendSource encodes one source after prev (the previous seq in the
// chunk, or the chunk's start): the seq as a delta, then the id, packed
// when it has the form the store gives ids (t-YYYYMMDD-NNNN).
func appendSource(b []byte, prev int64, r SourceRef) []byte {
	b = binary.AppendUvarint(b, uint64(r.Seq-prev))
	if day, n, ok := packTaskID(r.ID); ok {
		b = append(b, 1)
		b = binary.AppendUvarint(b, day)
		return binary.AppendUvarint(b, n)
	}
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(r.ID)))
	return append(b, r.ID...)
}

// packTaskID splits t-YYYYMMDD-NNNN into its day and number, when writing
// them back gives the same id.
func packTaskID(id string) (day, n uint64, ok bool) {
	if len(id) < 15 || id[0] != 't' || id[1] != '-' || id[10] != '-' {
		return 0, 0, false
	}
	d, err := strconv.ParseUint(id[2:10], 10, 32)
	if err != nil {
		return 0, 0, false
	}
	num, err := strconv.ParseUint(id[11:], 10, 32)
	if err != nil || unpackTaskID(d, num) != id {
		return 0, 0, false
	}
	return d, num, true
}

func unpackTaskID(day, n uint64) string {
	return fmt.Sprintf("t-%08d-%04d", day, n)
}

func decodeSources(start int64, b []byte) ([]SourceRef, error) {
	var out []SourceRef
	prev := start
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 || len(b) < k+1 {
			return nil, errors.New("bad source chunk")
		}
		b = b[k:]
		r := SourceRef{Seq: prev + int64(d)}
		kind := b[0]
		b = b[1:]
		switch kind {
		case 1:
			day, k1 := binary.Uvarint(b)
			if k1 <= 0 {
				return nil, errors.New("bad source chunk")
			}
			n, k2 := binary.Uvarint(b[k1:])
			if k2 <= 0 {
				return nil, errors.New("bad source chunk")
			}
			b = b[k1+k2:]
			r.ID = unpackTaskID(day, n)
		case 0:
			l, k1 := binary.Uvarint(b)
			if k1 <= 0 || uint64(len(b)-k1) < l {
				return nil, errors.New("bad source chunk")
			}
			r.ID = string(b[k1 : k1+int(l)])
			b = b[k1+int(l):]
		default:
			return nil, errors.New("bad source chunk")
		}
		prev = r.Seq
		out = append(out, r)
	}
	return out, nil
}

func encodeSources(refs []SourceRef) []byte {
	var b []byte
	prev := refs[0].Seq
	for _, r := range refs {
		b = appendSource(b, prev, r)
		prev = r.Seq
	}
	return b
}

// candidateSources reads a candidate's sources in seq order (reverse:
// latest first, stopping after limit when limit > 0).
func candidateSources(q queryer, id string, reverse bool, limit int) ([]SourceRef, error) {
	query := `SELECT start, data FROM skill_candidate_sources WHERE candidate_id = ? ORDER BY start`
	if reverse {
		query += ` DESC`
	}
	rows, err := q.Query(query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SourceRef
	for rows.Next() {
		var (
			start int64
			data  []byte
		)
		if err := rows.Scan(&start, &data); err != nil {
			return nil, err
		}
		refs, err := decodeSources(start, data)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", id, err)
		}
		if reverse {
			slices.Reverse(refs)
		}
		out = append(out, refs...)
		if limit > 0 && len(out) >= limit {
			return out[:limit], nil
		}
	}
	return out, rows.Err()
}

// writeSources replaces a candidate's sources with refs (sorted by seq).
func writeSources(tx *writeTx, id string, refs []SourceRef) error {
	if _, err := tx.Exec(`DELETE FROM skill_candidate_sources WHERE candidate_id = ?`, id); err != nil {
		return err
	}
	for start := 0; start < len(refs); start += sourceChunk {
		part := refs[start:min(len(refs), start+sourceChunk)]
		if _, err := tx.Exec(`INSERT INTO skill_candidate_sources (candidate_id, start, data) VALUES (?, ?, ?)`,
			id, part[0].Seq, encodeSources(part)); err != nil {
			return err
		}
	}
	_, err := tx.Exec(`UPDATE skill_candidates SET source_count = ?, source_task_ids = '[]' WHERE id = ?`, len(refs), id)
	return err
}

// CandidateSources returns a candidate's sources in arrival order.
func (v *MineView) CandidateSources(id string) ([]SourceRef, error) {
	refs, err := candidateSources(v.q, id, false, 0)
	if err != nil {
		return nil, fmt.Errorf("candidate sources: %w", err)
	}
	return refs, nil
}

// FirstSources returns a candidate's first n sources, in arrival order.
func (v *MineView) FirstSources(id string, n int) ([]SourceRef, error) {
	refs, err := candidateSources(v.q, id, false, n)
	if err != nil {
		return nil, fmt.Errorf("candidate sources: %w", err)
	}
	return refs, nil
}

// LatestSources returns a candidate's latest n sources, latest first.
func (v *MineView) LatestSources(id string, n int) ([]SourceRef, error) {
	refs, err := candidateSources(v.q, id, true, n)
	if err != nil {
		return nil, fmt.Errorf("candidate sources: %w", err)
	}
	return refs, nil
}

// SetSources replaces a candidate's sources (sorted by seq).
func (t *MineTx) SetSources(id string, refs []SourceRef) error {
	if err := writeSources(t.w, id, refs); err != nil {
		return fmt.Errorf("candidate %s sources: %w", id, err)
	}
	return nil
}

// EditSources adds and removes sources of a candidate (by seq), rewriting
// only the chunks they fall in.
func (t *MineTx) EditSources(id string, add []SourceRef, remove []int64) error {
	if err := editSources(t.w, id, add, remove); err != nil {
		return fmt.Errorf("candidate %s sources: %w", id, err)
	}
	return nil
}

func editSources(tx *writeTx, id string, add []SourceRef, remove []int64) error {
	type chunk struct {
		refs []SourceRef
	}
	chunks := map[int64]*chunk{} // by the start it was stored under
	var first int64 = -1
	load := func(seq int64) (int64, error) {
		var (
			start int64
			data  []byte
		)
		err := tx.QueryRow(`SELECT start, data FROM skill_candidate_sources WHERE candidate_id = ? AND start <= ?
ORDER BY start DESC LIMIT 1`, id, seq).Scan(&start, &data)
		if errors.Is(err, sql.ErrNoRows) {
			if first < 0 {
				err = tx.QueryRow(`SELECT start, data FROM skill_candidate_sources WHERE candidate_id = ? ORDER BY start LIMIT 1`, id).Scan(&start, &data)
				if errors.Is(err, sql.ErrNoRows) {
					first = seq // no chunk at all: a new one, stored under its first seq
					chunks[seq] = &chunk{}
					return seq, nil
				}
				if err != nil {
					return 0, err
				}
				first = start
			} else {
				start = first
				if _, ok := chunks[start]; ok {
					return start, nil
				}
				if err := tx.QueryRow(`SELECT data FROM skill_candidate_sources WHERE candidate_id = ? AND start = ?`, id, start).Scan(&data); err != nil {
					return 0, err
				}
			}
		} else if err != nil {
			return 0, err
		}
		if _, ok := chunks[start]; !ok {
			refs, err := decodeSources(start, data)
			if err != nil {
				return 0, err
			}
			chunks[start] = &chunk{refs: refs}
		}
		return start, nil
	}
	delta := 0
	for _, s := range remove {
		start, err := load(s)
		if err != nil {
			return err
		}
		c := chunks[start]
		if i, ok := slices.BinarySearchFunc(c.refs, s, func(r SourceRef, s int64) int { return cmpInt64(r.Seq, s) }); ok {
			c.refs = slices.Delete(c.refs, i, i+1)
			delta--
		}
	}
	for _, r := range add {
		start, err := load(r.Seq)
		if err != nil {
			return err
		}
		c := chunks[start]
		i, ok := slices.BinarySearchFunc(c.refs, r.Seq, func(r SourceRef, s int64) int { return cmpInt64(r.Seq, s) })
		if ok {
			c.refs[i] = r
			continue
		}
		c.refs = slices.Insert(c.refs, i, r)
		delta++
	}
	starts := make([]int64, 0, len(chunks))
	for s := range chunks {
		starts = append(starts, s)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, s := range starts {
		c := chunks[s]
		if _, err := tx.Exec(`DELETE FROM skill_candidate_sources WHERE candidate_id = ? AND start = ?`, id, s); err != nil {
			return err
		}
		for at := 0; at < len(c.refs); at += sourceChunk {
			part := c.refs[at:min(len(c.refs), at+sourceChunk)]
			if _, err := tx.Exec(`INSERT INTO skill_candidate_sources (candidate_id, start, data) VALUES (?, ?, ?)`,
				id, part[0].Seq, encodeSources(part)); err != nil {
				return err
			}
		}
	}
	_, err := tx.Exec(`UPDATE skill_candidates SET source_count = source_count + ? WHERE id = ?`, delta, id)
	return err
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CandidateLite is a stored candidate without its body and sources: what
// a scan needs of every candidate.
type CandidateLite struct {
	ID, Name, Description string
	Status, Kind          string
	GroupKey              string
	RejectedSize          int
	Sources               int // number of source tasks
	Edited                bool
	CreatedAt             time.Time
}

// CandidatesLite returns every candidate as CandidateLite, in creation
// order.
func (v *MineView) CandidatesLite() ([]CandidateLite, error) {
	return v.candidatesLite(``)
}

// CandidateLite returns the candidate with the given id as CandidateLite.
func (v *MineView) CandidateLite(id string) (*CandidateLite, error) {
	cs, err := v.candidatesLite(`WHERE id = ?`, id)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return &cs[0], nil
}

// CandidateLiteByKey returns the first candidate created for a group key.
func (v *MineView) CandidateLiteByKey(key string) (*CandidateLite, error) {
	cs, err := v.candidatesLite(`WHERE group_key = ?`, key)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return &cs[0], nil
}

func (v *MineView) candidatesLite(where string, args ...any) ([]CandidateLite, error) {
	rows, err := v.query(`SELECT id, name, description, status, kind, group_key, rejected_size, source_count,
edited_at IS NOT NULL, source_task_ids, created_at FROM skill_candidates `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("skill candidates: %w", err)
	}
	defer rows.Close()
	var out []CandidateLite
	for rows.Next() {
		var (
			c       CandidateLite
			json    sql.RawBytes
			created sql.NullString
		)
		if err := rows.Scan(&c.ID, &c.Name, &c.Description, &c.Status, &c.Kind, &c.GroupKey, &c.RejectedSize,
			&c.Sources, &c.Edited, &json, &created); err != nil {
			return nil, fmt.Errorf("skill candidates: %w", err)
		}
		var err error
		if c.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("candidate %s: %w", c.Name, err)
		}
		if c.Sources < 0 {
			ids, err := decodeList(string(json))
			if err != nil {
				return nil, fmt.Errorf("candidate %s: source task ids: %w", c.Name, err)
			}
			c.Sources = len(ids)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Candidate returns the stored candidate with the given column value
// (id, name or group_key; for a group key, the first created), with its
// sources.
func (v *MineView) Candidate(column, value string) (SkillCandidate, bool, error) {
	switch column {
	case "id", "name", "group_key":
	default:
		return SkillCandidate{}, false, fmt.Errorf("candidate by %s: not a key", column)
	}
	cs, err := queryCandidates(v.q, `SELECT `+candidateColumns+` FROM skill_candidates WHERE `+column+` = ?
ORDER BY created_at, id LIMIT 1`, value)
	if err != nil {
		return SkillCandidate{}, false, fmt.Errorf("skill candidate: %w", err)
	}
	if len(cs) == 0 {
		return SkillCandidate{}, false, nil
	}
	return cs[0], true, nil
}

// Taken reports whether a candidate has the given id or name.
func (v *MineView) Taken(column, value string) (bool, error) {
	if column != "id" && column != "name" {
		return false, fmt.Errorf("candidate by %s: not a key", column)
	}
	ok, err := exists(v.q, `SELECT 1 FROM skill_candidates WHERE `+column+` = ?`, value)
	if err != nil {
		return false, fmt.Errorf("skill candidate: %w", err)
	}
	return ok, nil
}

// LastDecision is the id of the latest skill decision, 0 if none.
func (v *MineView) LastDecision() (int64, error) {
	var id int64
	if err := v.queryRow(`SELECT COALESCE(MAX(id), 0) FROM skill_decisions`).Scan(&id); err != nil {
		return 0, fmt.Errorf("skill decisions: %w", err)
	}
	return id, nil
}

// DecisionsAfter returns the candidates (by id) with a decision recorded
// after decision id after, and the last decision id.
func (v *MineView) DecisionsAfter(after int64) ([]string, int64, error) {
	rows, err := v.query(`SELECT id, candidate_id FROM skill_decisions WHERE id > ? ORDER BY id`, after)
	if err != nil {
		return nil, 0, fmt.Errorf("skill decisions: %w", err)
	}
	defer rows.Close()
	last := after
	seen := map[string]bool{}
	var out []string
	for rows.Next() {
		var (
			id   int64
			cand string
		)
		if err := rows.Scan(&id, &cand); err != nil {
			return nil, 0, fmt.Errorf("skill decisions: %w", err)
		}
		last = id
		if !seen[cand] {
			seen[cand] = true
			out = append(out, cand)
		}
	}
	return out, last, rows.Err()
}

// CandidateText returns the candidate with the given id without its
// sources (nil SourceTaskIDs), or ErrUnknownSkill.
func (v *MineView) CandidateText(id string) (SkillCandidate, error) {
	c, err := scanCandidate(v.queryRow(`SELECT `+candidateColumns+` FROM skill_candidates WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return SkillCandidate{}, fmt.Errorf("%w %q", ErrUnknownSkill, id)
	}
	c.SourceTaskIDs = nil
	return c, err
}

// SeqsOf returns the seqs of the tasks with the given ids (those that
// exist).
func (v *MineView) SeqsOf(ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	for start := 0; start < len(ids); start += getBatch {
		part := ids[start:min(len(ids), start+getBatch)]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := v.query(`SELECT id, seq FROM tasks WHERE id IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("task seqs: %w", err)
		}
		for rows.Next() {
			var (
				id  string
				seq int64
			)
			if err := rows.Scan(&id, &seq); err != nil {
				rows.Close()
				return nil, fmt.Errorf("task seqs: %w", err)
			}
			out[id] = seq
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("task seqs: %w", err)
		}
	}
	return out, nil
}

// PutCandidate inserts c (prev nil) or replaces prev with it, all but its
// sources (SetSources, EditSources), its CreatedAt, and its body when
// keepBody is set; a status change is recorded in the decision log as
// UpdateSkillCandidates does.
func (t *MineTx) PutCandidate(c SkillCandidate, prev *SkillCandidate, keepBody bool, by string, at time.Time) error {
	if err := checkCandidate(c); err != nil {
		return err
	}
	if prev == nil {
		_, err := t.w.Exec(`INSERT INTO skill_candidates (id, name, description, body, source_task_ids, status, kind, group_key,
rejected_size, edited_at, created_at, updated_at, source_count) VALUES (?, ?, ?, ?, '[]', ?, ?, ?, ?, ?, ?, ?, 0)`,
			c.ID, c.Name, c.Description, c.Body, c.Status, c.Kind, c.GroupKey, c.RejectedSize,
			nullTime(c.EditedAt), formatTime(at), formatTime(at))
		if err := nameTaken(err, c.Name); err != nil {
			return fmt.Errorf("insert skill candidate %s: %w", c.Name, err)
		}
		return nil
	}
	var err error
	if keepBody {
		_, err = t.w.Exec(`UPDATE skill_candidates SET name = ?, description = ?, status = ?,
kind = ?, group_key = ?, rejected_size = ?, edited_at = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Description, c.Status, c.Kind, c.GroupKey, c.RejectedSize,
			nullTime(c.EditedAt), formatTime(at), c.ID)
	} else {
		_, err = t.w.Exec(`UPDATE skill_candidates SET name = ?, description = ?, body = ?, status = ?,
kind = ?, group_key = ?, rejected_size = ?, edited_at = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Description, c.Body, c.Status, c.Kind, c.GroupKey, c.RejectedSize,
			nullTime(c.EditedAt), formatTime(at), c.ID)
	}
	if err := nameTaken(err, c.Name); err != nil {
		return fmt.Errorf("update skill candidate %s: %w", c.Name, err)
	}
	if prev.Status != c.Status {
		decision := c.Status
		if prev.Status == SkillRejected && c.Status == SkillPending {
			decision = "reopened"
		}
		if err := recordDecision(t.w, SkillDecision{CandidateID: c.ID, Name: c.Name, Decision: decision,
			FromStatus: prev.Status, ToStatus: c.Status, By: by, At: at}); err != nil {
			return fmt.Errorf("record skill decision: %w", err)
		}
	}
	return nil
}
