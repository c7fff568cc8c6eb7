package queue

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// staleReport rejects a report that parsed but names a task its file may
// not close (unknown, closed, not handed out, another role's): an agent's
// stale or mistaken task id, not a broken file. It goes to failed/ with
// its reason, for the record, like any rejected file. When the file is a
// role's own report file (role is its role), nothing is left for a person
// to clear:
//
//   - a report naming a task of the role's that is already closed is the
//     agent writing again about a task whose report was accepted: no
//     attention line;
//   - otherwise, while the role has a task under way, the agent is told
//     (typed, like a report notification) that its report named another
//     task and which task is its own, and the attention line lasts only
//     until the role's report file is accepted for a task of the role's
//     (settleStale).
//
// A report under any other name keeps its attention line until a person
// dismisses it.
func (q *Queue) staleReport(c claim, data []byte, role, taskID string, cause error) (claim, bool) {
	again, ok := q.reject(c, data, cause)
	if !ok || role == "" {
		return again, ok
	}
	rewrite := false
	if t, err := q.st.Task(taskID); err == nil && t.Role == role && store.Closed(t.Status) {
		recorded, err := q.st.ReportsForTask(taskID)
		rewrite = err == nil && len(recorded) > 0
	}
	if rewrite {
		q.dropAttention(q.newestRejection(c.name))
		return again, ok
	}
	q.settleWhenAccepted(c.name)
	q.tellStale(role, taskID)
	return again, ok
}

// brokenReport rejects a report file that cannot be read as a report (empty,
// not YAML, a key missing). From a role's own report file, its attention
// line lasts only until that file is accepted for a task of the role's
// (settleStale): the agent wrote it again, right.
func (q *Queue) brokenReport(c claim, data []byte, cause error) (claim, bool) {
	again, ok := q.reject(c, data, cause)
	if ok && q.reportRole(c.name) != "" {
		q.settleWhenAccepted(c.name)
	}
	return again, ok
}

// newestRejection chooses the newest attention line about a file named
// name rejected: the one reject just added.
func (q *Queue) newestRejection(name string) func(attention) bool {
	line := "rejected " + textsafe.Escape(name) + ":"
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := len(q.recent) - 1; i >= 0; i-- {
		if a := q.recent[i]; a.file != "" && strings.HasPrefix(a.text, line) {
			return func(b attention) bool { return b == a }
		}
	}
	return func(attention) bool { return false }
}

// settleWhenAccepted makes the newest rejection line of the file name
// last until a report from name is accepted (settleStale).
func (q *Queue) settleWhenAccepted(name string) {
	newest := q.newestRejection(name)
	q.mu.Lock()
	for i := range q.recent {
		if newest(q.recent[i]) {
			q.recent[i].settledBy = name
		}
	}
	q.mu.Unlock()
}

// tellStale types into role, when it has a task under way, that its report
// named taskID and was not accepted (unless the task is closed by the time
// the role can be typed into). The text names no file to read, so an
// agent does not take it for a new task.
func (q *Queue) tellStale(role, taskID string) {
	cur, err := q.st.InFlight(role)
	if err != nil || cur == nil || cur.ID == taskID {
		return
	}
	r, ok := q.config().Role(role)
	w, running := q.worker(role)
	if !ok || !running {
		return
	}
	report := textsafe.Escape(r.TemplateVars(q.layout)[roles.VarReportFile])
	text := fmt.Sprintf("shogun: your report in %s was not accepted: its task_id is %s, which is not your task. "+
		"Your task is %s (%s): write its report with task_id: %s.",
		report, textsafe.Escape(taskID), cur.ID, typedTitle(cur.Title), cur.ID)
	w.addNote(note{taskID: cur.ID, text: text, whileOpen: true})
	q.event(role, "report-stale", cur.ID, fmt.Sprintf("a report naming %s was rejected; the agent was told its task is %s", textsafe.Escape(taskID), cur.ID))
}

// settleStale ends the attention lines of the reports rejected from the
// role's own report file name once a report from it was accepted for a
// task of the role's: the agent corrected itself. The files stay in
// failed/.
func (q *Queue) settleStale(name, role string) {
	if q.reportRole(name) != role {
		return
	}
	q.dropAttention(func(a attention) bool { return a.settledBy == name })
}

// dropAttention removes the attention lines drop chooses.
func (q *Queue) dropAttention(drop func(attention) bool) {
	q.mu.Lock()
	n := len(q.recent)
	q.recent = slices.DeleteFunc(q.recent, drop)
	n -= len(q.recent)
	q.mu.Unlock()
	if n > 0 {
		q.touched()
	}
}
