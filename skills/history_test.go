package skills

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// day is when the tests' tasks arrive; task n arrives n minutes later, so
// the ids are t-20261122-0001, -0002, ... in the order tasks are added.
var day = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

var testRoles = []string{"shogun", "karo", "ashigaru1", "ashigaru2", "ashigaru3"}

// spec is a finished task as a test describes it: the command a person or
// agent sent and the report the agent wrote.
type spec struct {
	role, title, body string
	tags              []string
	status            string // "" means done; cancelled: never worked on
	summary, details  string
	files             []string
	skill, skillDoc   string
	// parent is the task whose role sent the command (a karo's order, for
	// a part of it); "" for a command from a person.
	parent string
}

// history is a workspace's history built the way the queue builds it:
// roles synced, a run started, every task accepted from a command,
// assigned, delivered and closed by a report.
type historyDB struct {
	t    testing.TB
	st   *store.Store
	path string // the database file
	run  store.Run
	n    int
	ids  []string
}

func newHistoryDB(t testing.TB) *historyDB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "shogun.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var roles []store.RoleInfo
	for _, r := range testRoles {
		roles = append(roles, store.RoleInfo{ID: r, Name: r, PromptPath: "roles/" + r + ".md", Enabled: true})
	}
	if err := st.SyncRoles(roles, day); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(4242, "/ws", day)
	if err != nil {
		t.Fatal(err)
	}
	return &historyDB{t: t, st: st, path: path, run: run}
}

// add records finished tasks and returns their ids.
func (h *historyDB) add(specs ...spec) []string {
	h.t.Helper()
	var ids []string
	for _, s := range specs {
		h.n++
		at := day.Add(time.Duration(h.n) * time.Minute)
		cmd := store.CommandRecord{
			ID: fmt.Sprintf("cmd-%d", h.n), ClaimName: fmt.Sprintf("claim-%d.yaml", h.n), File: "cmd.yaml",
			To: s.role, From: "karo", Title: s.title, Body: s.body, Tags: s.tags, RunID: h.run.ID, ReceivedAt: at,
		}
		if s.parent != "" {
			p, err := h.st.Task(s.parent)
			if err != nil {
				h.t.Fatal(err)
			}
			cmd.Parent, cmd.Root, cmd.Depth = p.ID, p.Root, p.Depth+1
		}
		acc, err := h.st.AcceptCommands([]store.CommandRecord{cmd})
		if err != nil {
			h.t.Fatal(err)
		}
		id := acc[0].Task.ID
		ids = append(ids, id)
		if s.status == store.StatusCancelled {
			if _, err := h.st.Cancel(id, "not needed", at.Add(time.Second)); err != nil {
				h.t.Fatal(err)
			}
			continue
		}
		if _, err := h.st.Assign(id, at.Add(time.Second)); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.st.MarkDelivery(id, true, 1, at.Add(2*time.Second)); err != nil {
			h.t.Fatal(err)
		}
		status, summary := s.status, s.summary
		if status == "" {
			status = store.StatusDone
		}
		if summary == "" {
			summary = "Done: " + s.title
		}
		if _, _, err := h.st.AcceptReport(store.ReportRecord{
			ClaimName: fmt.Sprintf("report-%d.yaml", h.n), File: "report.yaml", TaskID: id, Status: status,
			Summary: summary, Details: s.details, Files: s.files, SkillName: s.skill, SkillDescription: s.skillDoc,
			ReceivedAt: at.Add(30 * time.Second),
		}); err != nil {
			h.t.Fatal(err)
		}
	}
	h.ids = append(h.ids, ids...)
	return ids
}

// scan runs Scan at a fixed time with the given options.
func (h *historyDB) scan(o ScanOptions) ScanResult {
	h.t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return day.Add(24 * time.Hour) }
	}
	res, err := Scan(h.st, o)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// candidates returns the stored candidates by name.
func (h *historyDB) candidates() map[string]store.SkillCandidate {
	h.t.Helper()
	cs, err := h.st.SkillCandidates("")
	if err != nil {
		h.t.Fatal(err)
	}
	m := map[string]store.SkillCandidate{}
	for _, c := range cs {
		m[c.Name] = c
	}
	return m
}

func (h *historyDB) candidate(name string) store.SkillCandidate {
	h.t.Helper()
	c, err := h.st.SkillCandidate(name)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
