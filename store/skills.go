package store

import (
	"cmp"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Skill candidate statuses. A scan proposes (pending); a person approves or
// rejects; an export writes approved ones (exported). A scan reopens a
// rejected candidate (back to pending) only when its group has grown enough.
const (
	SkillPending  = "pending"
	SkillApproved = "approved"
	SkillRejected = "rejected"
	SkillExported = "exported"
)

// SkillStatuses lists the candidate statuses, in their usual order.
var SkillStatuses = []string{SkillPending, SkillApproved, SkillRejected, SkillExported}

// Sentinel errors of the skill tables, for errors.Is.
var (
	// ErrUnknownSkill means no candidate has the given name or id.
	ErrUnknownSkill = errors.New("unknown skill candidate")
	// ErrSkillNameTaken means another candidate already has the name.
	ErrSkillNameTaken = errors.New("skill name already taken")
	// ErrSkillExported means the candidate was exported; its files are out
	// in the world and a review decision would no longer describe them.
	ErrSkillExported = errors.New("skill candidate already exported")
)

// FinishedTask is a closed task that was worked on (done, failed or
// blocked; not cancelled) with its report, as skill mining reads it.
type FinishedTask struct {
	ID, Role, Title, Body string
	Tags                  []string
	Status                string // done, failed or blocked
	Seq                   int64
	CreatedAt, FinishedAt time.Time
	// From the task's last report; Summary falls back to the task's.
	Summary, Details string
	Files            []string
	// SkillName and SkillDescription are the agent's skill_candidate, if
	// it proposed one.
	SkillName, SkillDescription string
}

// FinishedTasks returns every finished task with its last report, in
// arrival order (seq), read from one snapshot of the history. It reads the
// tasks and the reports in two plain scans and joins them in memory, which
// is several times faster on a large history than a join in SQL.
func (s *Store) FinishedTasks() ([]FinishedTask, error) {
	tx, err := s.r.Begin()
	if err != nil {
		return nil, fmt.Errorf("finished tasks: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to keep
	type report struct {
		id                                           int64
		summary, details, files, skillName, skillDoc string
	}
	// Counted first so that the map and the slice are allocated once: on
	// a large history their growth was a good part of the scan's garbage.
	var nTasks, nReports int
	if err := tx.QueryRow(`SELECT (SELECT COUNT(*) FROM tasks WHERE status IN (?, ?, ?)),
(SELECT COUNT(*) FROM reports)`, StatusDone, StatusFailed, StatusBlocked).Scan(&nTasks, &nReports); err != nil {
		return nil, fmt.Errorf("finished tasks: %w", err)
	}
	reports := make(map[string]report, nReports)
	rows, err := tx.Query(`SELECT task_id, id, summary, details, files, skill_name, skill_description FROM reports`)
	if err != nil {
		return nil, fmt.Errorf("finished tasks: reports: %w", err)
	}
	for rows.Next() {
		var (
			taskID string
			r      report
		)
		if err := rows.Scan(&taskID, &r.id, &r.summary, &r.details, &r.files, &r.skillName, &r.skillDoc); err != nil {
			rows.Close()
			return nil, fmt.Errorf("finished tasks: reports: %w", err)
		}
		if prev, ok := reports[taskID]; !ok || r.id > prev.id {
			reports[taskID] = r
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("finished tasks: reports: %w", err)
	}

	// NOT INDEXED: nearly every task is finished, so walking the table
	// beats looking each row up through tasks_status.
	rows, err = tx.Query(`SELECT id, role_id, title, body, tags, status, seq, created_at, finished_at, summary
FROM tasks NOT INDEXED WHERE status IN (?, ?, ?)`, StatusDone, StatusFailed, StatusBlocked)
	if err != nil {
		return nil, fmt.Errorf("finished tasks: %w", err)
	}
	defer rows.Close()
	out := make([]FinishedTask, 0, nTasks)
	for rows.Next() {
		var (
			t                 FinishedTask
			tags              string
			created, finished sql.NullString
		)
		if err := rows.Scan(&t.ID, &t.Role, &t.Title, &t.Body, &tags, &t.Status, &t.Seq, &created, &finished, &t.Summary); err != nil {
			return nil, fmt.Errorf("finished tasks: %w", err)
		}
		if t.Tags, err = decodeList(tags); err != nil {
			return nil, fmt.Errorf("finished tasks: task %s: tags: %w", t.ID, err)
		}
		if t.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("finished tasks: task %s: %w", t.ID, err)
		}
		if t.FinishedAt, err = parseTime(finished); err != nil {
			return nil, fmt.Errorf("finished tasks: task %s: %w", t.ID, err)
		}
		t.Files = []string{}
		if r, ok := reports[t.ID]; ok {
			t.Summary, t.Details, t.SkillName, t.SkillDescription = r.summary, r.details, r.skillName, r.skillDoc
			if t.Files, err = decodeList(r.files); err != nil {
				return nil, fmt.Errorf("finished tasks: task %s: report files: %w", t.ID, err)
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("finished tasks: %w", err)
	}
	slices.SortFunc(out, func(a, b FinishedTask) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// decodeList decodes a JSON list of strings, the way tags, files and source
// task ids are kept. Lists of plain strings, nearly all of them, are read
// without encoding/json, which was a tenth of a large scan.
func decodeList(s string) ([]string, error) {
	if s == "[]" || s == "" {
		return []string{}, nil
	}
	if out, ok := plainList(s); ok {
		return out, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	return nonNil(out), nil
}

// plainList reads ["a","b"] as json.Marshal writes it when no string needs
// an escape; ok is false for anything else.
func plainList(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' || strings.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	inner := s[1 : len(s)-1]
	out := make([]string, 0, strings.Count(inner, `","`)+1)
	for len(inner) > 0 {
		if inner[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(inner[1:], '"')
		if end < 0 {
			return nil, false
		}
		out = append(out, inner[1:1+end])
		inner = inner[end+2:]
		if len(inner) > 0 {
			if inner[0] != ',' {
				return nil, false
			}
			inner = inner[1:]
		}
	}
	return out, true
}

// SkillCandidate is a proposed skill: mined from a group of finished tasks,
// or proposed by an agent in a report.
type SkillCandidate struct {
	ID string
	// Name is the Agent Skills name (unique among candidates); Description
	// says what the skill does and when to use it; Body is the Markdown
	// after the front matter.
	Name, Description, Body string
	// SourceTaskIDs are the tasks of the group, in arrival order.
	SourceTaskIDs []string
	Status        string // SkillPending, SkillApproved, SkillRejected or SkillExported
	// Kind and GroupKey identify the group the candidate was mined from
	// (the skills package defines them), so a re-scan finds it again.
	Kind, GroupKey string
	// RejectedSize is the number of source tasks when it was last rejected.
	RejectedSize int
	// EditedAt is when a person last edited the text; zero if never. A
	// re-scan keeps edited text.
	EditedAt             time.Time
	CreatedAt, UpdatedAt time.Time

	// sourceCount is the number of sources in skill_candidate_sources, or
	// -1 when they are still the JSON list source_task_ids.
	sourceCount int
}

// SkillDecision is one change of a candidate's status or text, with who
// made it ("review", "scan", "export", ...) and when.
type SkillDecision struct {
	ID                   int64
	CandidateID, Name    string
	Decision             string // approved, rejected, reopened, exported, edited, ...
	FromStatus, ToStatus string
	By, Note             string
	At                   time.Time
}

const candidateColumns = `id, name, description, body, source_task_ids, status, kind, group_key, rejected_size,
edited_at, created_at, updated_at, source_count`

func scanCandidate(row scanner) (SkillCandidate, error) {
	var (
		c                    SkillCandidate
		sources              string
		edited, created, upd sql.NullString
	)
	if err := row.Scan(&c.ID, &c.Name, &c.Description, &c.Body, &sources, &c.Status, &c.Kind, &c.GroupKey,
		&c.RejectedSize, &edited, &created, &upd, &c.sourceCount); err != nil {
		return SkillCandidate{}, err
	}
	var err error
	if c.sourceCount < 0 {
		if c.SourceTaskIDs, err = decodeList(sources); err != nil {
			return SkillCandidate{}, fmt.Errorf("candidate %s: source task ids: %w", c.Name, err)
		}
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&c.EditedAt, edited}, {&c.CreatedAt, created}, {&c.UpdatedAt, upd}} {
		if *f.dst, err = parseTime(f.src); err != nil {
			return SkillCandidate{}, fmt.Errorf("candidate %s: %w", c.Name, err)
		}
	}
	return c, nil
}

func queryCandidates(q queryer, query string, args ...any) ([]SkillCandidate, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SkillCandidate
	for rows.Next() {
		c, err := scanCandidate(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close() // before the sources are read: the writer has one connection
	for i := range out {
		if err := loadSources(q, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadSources fills in the source task ids of a candidate whose sources
// are kept in chunks.
func loadSources(q queryer, c *SkillCandidate) error {
	if c.sourceCount < 0 {
		return nil
	}
	refs, err := candidateSources(q, c.ID, false, 0)
	if err != nil {
		return fmt.Errorf("candidate %s: sources: %w", c.Name, err)
	}
	c.SourceTaskIDs = make([]string, len(refs))
	for i, r := range refs {
		c.SourceTaskIDs[i] = r.ID
	}
	return nil
}

// SkillCandidates returns the candidates with the given status ("" for
// all), by name.
func (s *Store) SkillCandidates(status string) ([]SkillCandidate, error) {
	q := `SELECT ` + candidateColumns + ` FROM skill_candidates`
	var args []any
	if status != "" {
		q += ` WHERE status = ?`
		args = append(args, status)
	}
	cs, err := queryCandidates(s.read(), q+` ORDER BY name`, args...)
	if err != nil {
		return nil, fmt.Errorf("list skill candidates: %w", err)
	}
	return cs, nil
}

// SkillCandidate returns the candidate with the given name, or
// ErrUnknownSkill.
func (s *Store) SkillCandidate(name string) (SkillCandidate, error) {
	c, err := loadCandidate(s.read(), `name`, name)
	if err != nil {
		return SkillCandidate{}, fmt.Errorf("get skill candidate: %w", err)
	}
	return c, nil
}

func loadCandidate(q queryer, column, v string) (SkillCandidate, error) {
	c, err := scanCandidate(q.QueryRow(`SELECT `+candidateColumns+` FROM skill_candidates WHERE `+column+` = ?`, v))
	if errors.Is(err, sql.ErrNoRows) {
		return SkillCandidate{}, fmt.Errorf("%w %q", ErrUnknownSkill, v)
	}
	if err != nil {
		return SkillCandidate{}, err
	}
	return c, loadSources(q, &c)
}

// UpdateSkillCandidates runs fn on every stored candidate inside one write
// transaction and stores what it returns: candidates with a new id are
// inserted, known ones replaced (all fields but CreatedAt). A status change
// is recorded in the decision log as made by by, with decision "reopened"
// for rejected to pending and the new status otherwise. This is how a scan
// reconciles what it mined with what is stored, without another writer
// (the supervisor's scan after a report, say) slipping in between.
func (s *Store) UpdateSkillCandidates(fn func(existing []SkillCandidate) ([]SkillCandidate, error), by string, at time.Time) error {
	err := s.write(func(tx *writeTx) error {
		existing, err := queryCandidates(tx, `SELECT `+candidateColumns+` FROM skill_candidates ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		old := make(map[string]SkillCandidate, len(existing))
		for _, c := range existing {
			old[c.ID] = c
		}
		changes, err := fn(existing)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if err := checkCandidate(c); err != nil {
				return err
			}
			prev, known := old[c.ID]
			if !known {
				if err := insertCandidate(tx, c, at); err != nil {
					return err
				}
				continue
			}
			if err := updateCandidate(tx, c, at); err != nil {
				return err
			}
			if prev.Status != c.Status {
				decision := c.Status
				if prev.Status == SkillRejected && c.Status == SkillPending {
					decision = "reopened"
				}
				if err := recordDecision(tx, SkillDecision{CandidateID: c.ID, Name: c.Name, Decision: decision,
					FromStatus: prev.Status, ToStatus: c.Status, By: by, At: at}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update skill candidates: %w", err)
	}
	return nil
}

func checkCandidate(c SkillCandidate) error {
	switch {
	case c.ID == "" || c.Name == "":
		return fmt.Errorf("candidate %q: id and name are required", c.Name)
	case !validSkillStatus(c.Status):
		return fmt.Errorf("candidate %s: status %q is not one of %s", c.Name, c.Status, strings.Join(SkillStatuses, ", "))
	}
	return nil
}

func validSkillStatus(s string) bool {
	for _, v := range SkillStatuses {
		if s == v {
			return true
		}
	}
	return false
}

// insertCandidate and updateCandidate keep the sources as the JSON list
// (source_count -1): UpdateSkillCandidates has ids, not the seqs the
// chunks are ordered by. Scans write chunks through MineTx.
func insertCandidate(tx *writeTx, c SkillCandidate, at time.Time) error {
	sources, err := json.Marshal(nonNil(c.SourceTaskIDs))
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO skill_candidates (`+candidateColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, -1)`,
		c.ID, c.Name, c.Description, c.Body, string(sources), c.Status, c.Kind, c.GroupKey, c.RejectedSize,
		nullTime(c.EditedAt), formatTime(at), formatTime(at))
	return nameTaken(err, c.Name)
}

func updateCandidate(tx *writeTx, c SkillCandidate, at time.Time) error {
	sources, err := json.Marshal(nonNil(c.SourceTaskIDs))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM skill_candidate_sources WHERE candidate_id = ?`, c.ID); err != nil {
		return err
	}
	_, err = tx.Exec(`UPDATE skill_candidates SET name = ?, description = ?, body = ?, source_task_ids = ?, status = ?,
kind = ?, group_key = ?, rejected_size = ?, edited_at = ?, updated_at = ?, source_count = -1 WHERE id = ?`,
		c.Name, c.Description, c.Body, string(sources), c.Status, c.Kind, c.GroupKey, c.RejectedSize,
		nullTime(c.EditedAt), formatTime(at), c.ID)
	return nameTaken(err, c.Name)
}

// updateText replaces a candidate's name, description and body as a person
// edited them, leaving its sources as they are.
func updateText(tx *writeTx, c SkillCandidate, at time.Time) error {
	_, err := tx.Exec(`UPDATE skill_candidates SET name = ?, description = ?, body = ?, edited_at = ?, updated_at = ? WHERE id = ?`,
		c.Name, c.Description, c.Body, nullTime(c.EditedAt), formatTime(at), c.ID)
	return nameTaken(err, c.Name)
}

// nameTaken turns the unique index's complaint into ErrSkillNameTaken.
func nameTaken(err error, name string) error {
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed: skill_candidates.name") {
		return fmt.Errorf("%w: %q", ErrSkillNameTaken, name)
	}
	return err
}

func recordDecision(tx *writeTx, d SkillDecision) error {
	_, err := tx.Exec(`INSERT INTO skill_decisions (candidate_id, name, decision, from_status, to_status, by, note, at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, d.CandidateID, d.Name, d.Decision, d.FromStatus, d.ToStatus, d.By, d.Note, formatTime(d.At))
	return err
}

// SkillVerdict is a review decision on one candidate, by name: Status is
// SkillApproved, SkillRejected or SkillPending (undecided again).
type SkillVerdict struct {
	Name, Status string
}

// DecideSkillCandidates applies verdicts in one transaction: every name
// must exist and none may be exported, or nothing changes. Each change is
// recorded with by and at; rejecting remembers the group's size, which a
// later scan compares against. A verdict that changes nothing (approving
// an approved candidate) is accepted and not recorded.
func (s *Store) DecideSkillCandidates(verdicts []SkillVerdict, by string, at time.Time) ([]SkillCandidate, error) {
	out := make([]SkillCandidate, 0, len(verdicts))
	err := s.write(func(tx *writeTx) error {
		for _, v := range verdicts {
			switch v.Status {
			case SkillApproved, SkillRejected, SkillPending:
			default:
				return fmt.Errorf("%s: a review decides approved, rejected or pending, not %q", v.Name, v.Status)
			}
			c, err := loadCandidate(tx, `name`, v.Name)
			if err != nil {
				return err
			}
			if c.Status == SkillExported {
				return fmt.Errorf("%w: %s", ErrSkillExported, c.Name)
			}
			if c.Status == v.Status {
				out = append(out, c)
				continue
			}
			prev := c.Status
			c.Status = v.Status
			if v.Status == SkillRejected {
				c.RejectedSize = len(c.SourceTaskIDs)
			}
			if _, err := tx.Exec(`UPDATE skill_candidates SET status = ?, rejected_size = ?, updated_at = ? WHERE id = ?`,
				c.Status, c.RejectedSize, formatTime(at), c.ID); err != nil {
				return err
			}
			if err := recordDecision(tx, SkillDecision{CandidateID: c.ID, Name: c.Name, Decision: v.Status,
				FromStatus: prev, ToStatus: v.Status, By: by, At: at}); err != nil {
				return err
			}
			c.UpdatedAt = at.UTC()
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decide skill candidates: %w", err)
	}
	return out, nil
}

// EditSkillCandidate replaces a candidate's name, description and body, as
// a person edited them, and records the edit. The status is unchanged; an
// exported candidate cannot be edited (ErrSkillExported), and a name
// another candidate has gives ErrSkillNameTaken.
func (s *Store) EditSkillCandidate(id, name, description, body, by string, at time.Time) (SkillCandidate, error) {
	var c SkillCandidate
	err := s.write(func(tx *writeTx) error {
		var err error
		c, err = loadCandidate(tx, `id`, id)
		if err != nil {
			return err
		}
		if c.Status == SkillExported {
			return fmt.Errorf("%w: %s", ErrSkillExported, c.Name)
		}
		note := "text"
		if name != c.Name {
			note = "renamed from " + c.Name
		}
		c.Name, c.Description, c.Body, c.EditedAt, c.UpdatedAt = name, description, body, at.UTC(), at.UTC()
		if err := updateText(tx, c, at); err != nil {
			return err
		}
		return recordDecision(tx, SkillDecision{CandidateID: c.ID, Name: c.Name, Decision: "edited",
			FromStatus: c.Status, ToStatus: c.Status, By: by, Note: note, At: at})
	})
	if err != nil {
		return SkillCandidate{}, fmt.Errorf("edit skill candidate: %w", err)
	}
	return c, nil
}

// SkillDecisions returns the decisions recorded for a candidate (by id; ""
// for every candidate), oldest first.
func (s *Store) SkillDecisions(candidateID string) ([]SkillDecision, error) {
	q := `SELECT id, candidate_id, name, decision, from_status, to_status, by, note, at FROM skill_decisions`
	var args []any
	if candidateID != "" {
		q += ` WHERE candidate_id = ?`
		args = append(args, candidateID)
	}
	rows, err := s.read().Query(q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("skill decisions: %w", err)
	}
	defer rows.Close()
	var out []SkillDecision
	for rows.Next() {
		var (
			d  SkillDecision
			at sql.NullString
		)
		if err := rows.Scan(&d.ID, &d.CandidateID, &d.Name, &d.Decision, &d.FromStatus, &d.ToStatus, &d.By, &d.Note, &at); err != nil {
			return nil, fmt.Errorf("skill decisions: %w", err)
		}
		if d.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("skill decisions: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("skill decisions: %w", err)
	}
	return out, nil
}

// Skill is an exported skill file: one row per target and path.
type Skill struct {
	ID, CandidateID         string
	Name, Description, Body string
	Target                  string // codex, copilot or claude
	Layout                  string // flat or dir
	Path                    string // absolute
	SHA256                  string // of the file as written
	CreatedAt               time.Time
}

// RecordSkillExports records exported files and marks their candidates
// exported (a decision by "export" for each that was not already), in one
// transaction. Recording the same target and path again updates the row:
// exporting is idempotent.
func (s *Store) RecordSkillExports(skills []Skill, at time.Time) error {
	err := s.write(func(tx *writeTx) error {
		for _, sk := range skills {
			if sk.Target == "" || sk.Path == "" || sk.Name == "" {
				return fmt.Errorf("skill %q: name, target and path are required", sk.Name)
			}
			id := skillRowID(sk.Target, sk.Path)
			if _, err := tx.Exec(`INSERT INTO skills (id, name, description, body, target, path, created_at, candidate_id, layout, sha256)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (target, path) DO UPDATE SET name = excluded.name, description = excluded.description,
  body = excluded.body, candidate_id = excluded.candidate_id, layout = excluded.layout, sha256 = excluded.sha256
WHERE sha256 IS NOT excluded.sha256 OR name IS NOT excluded.name`,
				id, sk.Name, sk.Description, sk.Body, sk.Target, sk.Path, formatTime(at), sk.CandidateID, sk.Layout, sk.SHA256); err != nil {
				return fmt.Errorf("skill %s to %s: %w", sk.Name, sk.Path, err)
			}
			if sk.CandidateID == "" {
				continue
			}
			c, err := loadCandidate(tx, `id`, sk.CandidateID)
			if err != nil {
				return err
			}
			if c.Status == SkillExported {
				continue
			}
			if _, err := tx.Exec(`UPDATE skill_candidates SET status = ?, updated_at = ? WHERE id = ?`,
				SkillExported, formatTime(at), c.ID); err != nil {
				return err
			}
			if err := recordDecision(tx, SkillDecision{CandidateID: c.ID, Name: c.Name, Decision: SkillExported,
				FromStatus: c.Status, ToStatus: SkillExported, By: "export", At: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record skill exports: %w", err)
	}
	return nil
}

// skillRowID is the id of a skills row: its natural key, hashed, so the
// seed's text id stays short.
func skillRowID(target, path string) string {
	sum := sha256.Sum256([]byte(target + "\x00" + path))
	return "sk-" + hex.EncodeToString(sum[:8])
}

// Skills returns the exported skill files, by name, target and path.
func (s *Store) Skills() ([]Skill, error) {
	rows, err := s.read().Query(`SELECT id, candidate_id, name, description, body, target, layout, path, sha256, created_at
FROM skills ORDER BY name, target, path`)
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	defer rows.Close()
	var out []Skill
	for rows.Next() {
		var (
			sk Skill
			at sql.NullString
		)
		if err := rows.Scan(&sk.ID, &sk.CandidateID, &sk.Name, &sk.Description, &sk.Body, &sk.Target, &sk.Layout,
			&sk.Path, &sk.SHA256, &at); err != nil {
			return nil, fmt.Errorf("list skills: %w", err)
		}
		if sk.CreatedAt, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("list skills: %w", err)
		}
		out = append(out, sk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	return out, nil
}

// FinishedTaskRecord is a finished task with its report, written directly
// by InsertFinishedTasks.
type FinishedTaskRecord struct {
	Role, From, Title, Body string
	Tags                    []string
	Priority                string // "" means normal
	Status                  string // done, failed or blocked
	Summary, Details        string
	Files                   []string
	SkillName               string
	SkillDescription        string
	CreatedAt, FinishedAt   time.Time
}

// InsertFinishedTasks writes finished tasks, each with its command and its
// report, in one transaction, and returns their ids. It is for benchmarks
// and tests that need a large history quickly (100,000 tasks in seconds):
// it skips the queue's protocol (claims, assignment, delivery), so a live
// workspace should never be fed this way. The roles and the run must
// exist (SyncRoles, StartRun). Ids are numbered per day of CreatedAt, as
// AcceptCommands numbers them.
func (s *Store) InsertFinishedTasks(runID string, recs []FinishedTaskRecord) ([]string, error) {
	ids := make([]string, 0, len(recs))
	// A page cache large enough for a batch's changes: the default spills
	// them to the WAL while the batch is written, which costs more than
	// the inserts. Set back after, so a live writer keeps its small cache.
	if _, err := s.w.Exec(`PRAGMA cache_size = -65536`); err != nil {
		return nil, fmt.Errorf("insert finished tasks: %w", err)
	}
	defer func() { _, _ = s.w.Exec(`PRAGMA cache_size = -2000`) }()
	err := s.write(func(tx *writeTx) error {
		var seq int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) FROM tasks`).Scan(&seq); err != nil {
			return err
		}
		last := map[string]int64{}
		// Many rows to a statement: a statement per row spent more on
		// running statements than on the rows.
		cmds := newBulkInsert(tx, `INSERT INTO commands (id, claim_name, file, to_role, from_role, title, body, tags, priority, run_id, received_at) VALUES `, 11)
		tasks := newBulkInsert(tx, `INSERT INTO tasks (id, run_id, role_id, title, body, status, created_at, updated_at, command_id,
from_role, tags, priority, seq, assigned_at, delivered_at, finished_at, attempts, submits, summary) VALUES `, 19)
		reports := newBulkInsert(tx, `INSERT INTO reports (claim_name, file, task_id, status, summary, details, files, skill_name, skill_description, received_at) VALUES `, 10)
		defer cmds.close()
		defer tasks.close()
		defer reports.close()
		bulk, err := beginBulkIndex(tx, seq+1, seq+int64(len(recs)))
		if err != nil {
			return err
		}
		for i, r := range recs {
			if r.Status != StatusDone && r.Status != StatusFailed && r.Status != StatusBlocked {
				return fmt.Errorf("record %d: status %q is not done, failed or blocked", i, r.Status)
			}
			prio, err := normPriority(r.Priority)
			if err != nil {
				return fmt.Errorf("record %d: %w", i, err)
			}
			day := r.CreatedAt.UTC().Format("20060102")
			n, ok := last[day]
			if !ok {
				err := tx.QueryRow(`SELECT last FROM task_numbers WHERE day = ?`, day).Scan(&n)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			n++
			last[day] = n
			seq++
			id := fmt.Sprintf("t-%s-%04d", day, n)
			cmdID := "bulk-" + id
			tags, err := json.Marshal(nonNil(r.Tags))
			if err != nil {
				return err
			}
			files, err := json.Marshal(nonNil(r.Files))
			if err != nil {
				return err
			}
			created, finished := formatTime(r.CreatedAt), formatTime(r.FinishedAt)
			// Commands before tasks before reports: the foreign keys.
			if err := cmds.add(cmdID, "bulk", "bulk", r.Role, r.From, r.Title, r.Body, string(tags), prio, runID, created); err != nil {
				return fmt.Errorf("record %d: command: %w", i, err)
			}
			if err := tasks.add(id, runID, r.Role, r.Title, r.Body, r.Status, created, finished, cmdID,
				r.From, string(tags), prio, seq, created, created, finished, 1, 1, r.Summary); err != nil {
				return fmt.Errorf("record %d: task: %w", i, err)
			}
			if err := reports.add("bulk-"+id, id+".yaml", id, r.Status, r.Summary, r.Details, string(files),
				r.SkillName, r.SkillDescription, finished); err != nil {
				return fmt.Errorf("record %d: report: %w", i, err)
			}
			if cmds.full() {
				for _, b := range []*bulkInsert{cmds, tasks, reports} {
					if err := b.flush(); err != nil {
						return fmt.Errorf("insert finished tasks: %w", err)
					}
				}
			}
			ids = append(ids, id)
		}
		for _, b := range []*bulkInsert{cmds, tasks, reports} {
			if err := b.flush(); err != nil {
				return fmt.Errorf("insert finished tasks: %w", err)
			}
		}
		days := make([]string, 0, len(last))
		for d := range last {
			days = append(days, d)
		}
		sort.Strings(days)
		for _, d := range days {
			if _, err := tx.Exec(`INSERT INTO task_numbers (day, last) VALUES (?, ?)
ON CONFLICT (day) DO UPDATE SET last = excluded.last`, d, last[d]); err != nil {
				return err
			}
		}
		return bulk.end()
	})
	if err != nil {
		return nil, fmt.Errorf("insert finished tasks: %w", err)
	}
	return ids, nil
}

// bulkInsert gathers rows and inserts them bulkRows to a statement.
type bulkInsert struct {
	tx    *writeTx
	head  string
	cols  int
	args  []any
	stmts map[int]*sql.Stmt // by number of rows
}

const bulkRows = 64

func newBulkInsert(tx *writeTx, head string, cols int) *bulkInsert {
	return &bulkInsert{tx: tx, head: head, cols: cols, stmts: map[int]*sql.Stmt{}}
}

func (b *bulkInsert) add(vals ...any) error {
	if len(vals) != b.cols {
		return fmt.Errorf("bulk insert: %d values for %d columns", len(vals), b.cols)
	}
	b.args = append(b.args, vals...)
	return nil
}

func (b *bulkInsert) full() bool { return len(b.args) >= bulkRows*b.cols }

func (b *bulkInsert) flush() error {
	rows := len(b.args) / b.cols
	if rows == 0 {
		return nil
	}
	st := b.stmts[rows]
	if st == nil {
		row := "(?" + strings.Repeat(",?", b.cols-1) + ")"
		var err error
		if st, err = b.tx.Tx.Prepare(b.head + row + strings.Repeat(","+row, rows-1)); err != nil {
			return err
		}
		b.stmts[rows] = st
	}
	_, err := st.Exec(b.args...)
	b.args = b.args[:0]
	return err
}

func (b *bulkInsert) close() {
	for _, st := range b.stmts {
		st.Close()
	}
}
