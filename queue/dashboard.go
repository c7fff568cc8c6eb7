package queue

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
)

// Touch asks for runtime/dashboard.md and runtime/state/status.yaml to be
// rewritten; the supervisor calls it on every role state change.
func (q *Queue) Touch() { q.touched() }

// keepDashboard rewrites the dashboard and status file after changes, at
// most every dashboardEvery, so a burst of changes costs one write.
func (q *Queue) keepDashboard(ctx context.Context) {
	q.writeDashboard()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.changed:
		}
		q.writeDashboard()
		select {
		case <-ctx.Done():
			return
		case <-time.After(dashboardEvery):
		}
	}
}

// dashboardEvery: both files are views (shogun status and the console ask
// the supervisor itself), and each rewrite queries the status and syncs two
// files: a team of many roles starting and sleeping changes state several
// times a second, and at five rewrites a second they took half of what a
// start cost shogun (docs/benchmarks.md, many roles, few slots).
const dashboardEvery = time.Second

// Status is the content of runtime/state/status.yaml: what people, agents
// and scripts read to know what the team is doing.
type Status struct {
	UpdatedAt time.Time      `yaml:"updated_at" json:"updated_at"`
	RunID     string         `yaml:"run_id" json:"run_id"`
	Pid       int            `yaml:"pid" json:"pid"`
	Roles     []RoleStatus   `yaml:"roles" json:"roles"`
	Tasks     map[string]int `yaml:"tasks" json:"tasks"`
	Recent    []ReportLine   `yaml:"recent_reports" json:"recent_reports"`
	// Blocked lists what keeps the queue from making progress now, and why
	// ("reports/ashigaru1.yaml: move rejected file to failed/: …"): a full
	// disk, a folder that cannot be written. The queue tries again by
	// itself; each item is also in Attention.
	Blocked []string `yaml:"queue_blocked,omitempty" json:"queue_blocked,omitempty"`
	// ConfigError, when set, says why the configuration files as they
	// are now were not taken into use (one problem per line, located
	// file:line:col): the supervisor runs on with the configuration it
	// had. It is also in Attention.
	ConfigError string `yaml:"config_error,omitempty" json:"config_error,omitempty"`
	// Attention is what a person should look at, escaped for display.
	Attention []string `yaml:"attention" json:"attention"`
}

// RoleStatus is one role in Status.
type RoleStatus struct {
	ID         string    `yaml:"id" json:"id"`
	Name       string    `yaml:"name" json:"name"`
	State      string    `yaml:"state" json:"state"`
	Pid        int       `yaml:"pid,omitempty" json:"pid,omitempty"`
	Since      time.Time `yaml:"since" json:"since"`
	Restarts   int       `yaml:"restarts" json:"restarts"`
	Task       *TaskRef  `yaml:"task,omitempty" json:"task,omitempty"`
	QueueDepth int       `yaml:"queue_depth" json:"queue_depth"`
	LastOutput time.Time `yaml:"last_output,omitempty" json:"last_output,omitempty"`
	// LimitedUntil is when a limited role's usage limit lifts.
	LimitedUntil time.Time `yaml:"limited_until,omitempty" json:"limited_until,omitempty"`
	// Budget, when set, says why the role gets no new task: its daily
	// budget, or the team's, is reached ("budget reached: 1.02M of 1M
	// tokens today").
	Budget string `yaml:"budget,omitempty" json:"budget,omitempty"`
	// BackoffReason, while State is backoff, is why shogun itself ended
	// the program it is about to restart ("memory 2.3 GB over memory_max
	// 2 GB"); "" after a crash.
	BackoffReason string `yaml:"backoff_reason,omitempty" json:"backoff_reason,omitempty"`
}

// TaskRef names a task in flight.
type TaskRef struct {
	ID     string `yaml:"id" json:"id"`
	Title  string `yaml:"title" json:"title"`
	Status string `yaml:"status" json:"status"`
}

// ReportLine is a recent report.
type ReportLine struct {
	At      time.Time `yaml:"at" json:"at"`
	Role    string    `yaml:"role" json:"role"`
	TaskID  string    `yaml:"task_id" json:"task_id"`
	Title   string    `yaml:"title" json:"title"`
	Status  string    `yaml:"status" json:"status"`
	Summary string    `yaml:"summary" json:"summary"`
}

// Snapshot gathers the current status.
func (q *Queue) Snapshot() (Status, error) {
	st := Status{UpdatedAt: q.now().UTC(), RunID: q.runID, Pid: os.Getpid()}
	depths, err := q.st.QueueDepths()
	if err != nil {
		return st, err
	}
	if st.Tasks, err = q.st.Counts(); err != nil {
		return st, err
	}
	// One query for every role's task in flight, not one per role: the
	// dashboard is rewritten after every change, and with many roles
	// configured (most of them asleep) a query each was most of the
	// supervisor's work (bench: many roles, few slots).
	inFlight, err := q.st.InFlightTasks()
	if err != nil {
		return st, err
	}
	flying := make(map[string]store.Task, len(inFlight))
	for _, t := range inFlight {
		if _, ok := flying[t.Role]; !ok { // the oldest, as InFlight gives
			flying[t.Role] = t
		}
	}
	for _, rc := range q.config().Enabled() {
		rs := RoleStatus{ID: rc.ID, Name: rc.Name, State: "not running", QueueDepth: depths[rc.ID]}
		if a, ok := q.agent(rc.ID); ok {
			s := a.Status()
			rs.State, rs.Pid, rs.Since, rs.Restarts, rs.LastOutput = string(s.State), s.Pid, s.Since.UTC(), s.Restarts, s.LastOutput.UTC()
			rs.BackoffReason = s.BackoffReason
			if s.State == supervisor.Fatal {
				blocked := ""
				if n := depths[rc.ID]; n > 0 {
					blocked = fmt.Sprintf(" its %d queued task(s) are blocked;", n)
				}
				st.Attention = append(st.Attention, fmt.Sprintf("role %s is fatal (%s):%s fix it and run shogun restart %s", rc.ID, s.LastError, blocked, rc.ID))
			}
			if s.State == supervisor.Attention {
				blocked := ""
				if n := depths[rc.ID]; n > 0 {
					blocked = fmt.Sprintf(" its %d queued task(s) are blocked;", n)
				}
				if strings.HasPrefix(s.Reason, "not ready within") {
					st.Attention = append(st.Attention, fmt.Sprintf("role %s is %s:%s attach to it, or fix it and run shogun restart %s", rc.ID, s.Reason, blocked, rc.ID))
				} else {
					st.Attention = append(st.Attention, fmt.Sprintf("role %s waits for a person:%s attach to it and answer its screen", rc.ID, blocked))
				}
			}
			if s.State == supervisor.Waiting {
				for _, q := range s.Questions {
					st.Attention = append(st.Attention, fmt.Sprintf("role %s waits for a person: %s (shogun questions; shogun answer %s yes|no --id ID)",
						rc.ID, textsafe.Escape(q), rc.ID))
				}
			}
			if s.State == supervisor.Limited && !s.LimitedUntil.IsZero() {
				rs.LimitedUntil = s.LimitedUntil.UTC()
			}
		}
		if rs.Budget = q.budgetHold(rc.ID); rs.Budget != "" && depths[rc.ID] > 0 {
			st.Attention = append(st.Attention, fmt.Sprintf("role %s: %s; its %d queued task(s) wait until the budget is raised (usage.budgets in config/settings.yaml) or the day turns",
				rc.ID, rs.Budget, depths[rc.ID]))
		}
		if t, ok := flying[rc.ID]; ok {
			rs.Task = &TaskRef{ID: t.ID, Title: t.Title, Status: t.Status}
			switch t.Status {
			case store.StatusUndelivered:
				st.Attention = append(st.Attention, fmt.Sprintf("task %s for %s is undelivered: the nudge was never confirmed; shogun retry %s", t.ID, rc.ID, t.ID))
			case store.StatusStalled:
				st.Attention = append(st.Attention, fmt.Sprintf("role %s needs a person: task %s is stalled (no report after a reminder and an interrupt); attach to %s, then shogun retry %s or shogun cancel %s", rc.ID, t.ID, rc.ID, t.ID, t.ID))
			}
		}
		st.Roles = append(st.Roles, rs)
	}
	reps, err := q.st.RecentReports(10)
	if err != nil {
		return st, err
	}
	for _, r := range reps {
		st.Recent = append(st.Recent, ReportLine{At: r.ReceivedAt.UTC(), Role: r.Role, TaskID: r.TaskID, Title: r.Title, Status: r.Status, Summary: r.Summary})
		if r.Status != store.StatusDone {
			st.Attention = append(st.Attention, fmt.Sprintf("task %s (%s) reported %s: %s", r.TaskID, r.Role, r.Status, r.Summary))
		}
	}
	// Tasks of roles that do not run because of the configuration wait;
	// say so, or they would wait unseen.
	cfg := q.config()
	for _, id := range sortedKeys(depths) {
		if depths[id] == 0 {
			continue
		}
		switch rc, ok := cfg.Role(id); {
		case !ok:
			st.Attention = append(st.Attention, fmt.Sprintf("%d task(s) queued for %s, which is not in config/roles.yaml: add the role, or shogun cancel them", depths[id], id))
		case !rc.Enabled:
			st.Attention = append(st.Attention, fmt.Sprintf("%d task(s) wait for %s, which is disabled in config/roles.yaml: enable it, or shogun cancel them", depths[id], id))
		}
	}
	st.Blocked = q.blockages()
	for i, b := range st.Blocked {
		st.Blocked[i] = textsafe.Escape(b)
		st.Attention = append(st.Attention, "queue blocked: "+st.Blocked[i]+" (retrying)")
	}
	st.Attention = append(st.Attention, q.rejectedAlerts()...)
	q.mu.Lock()
	if q.configError != nil {
		lines := strings.Split(q.configError.Error(), "\n")
		for i, l := range lines {
			lines[i] = textsafe.Escape(l)
		}
		st.ConfigError = strings.Join(lines, "\n")
		st.Attention = append(st.Attention, "configuration not applied, the running one is kept: "+strings.ReplaceAll(q.configError.Error(), "\n", "; "))
	}
	q.mu.Unlock()
	for i, a := range st.Attention {
		st.Attention[i] = textsafe.Escape(a)
	}
	return st, nil
}

// maxRecentAttention bounds the lines AddAttention keeps.
const maxRecentAttention = 20

// AddAttention adds a line to what a person should look at — the status's
// attention list (shogun status, the console's Team page) and
// runtime/dashboard.md — for the rest of this run; the last 20 such lines
// are kept, rejected files among them. text is escaped when shown.
func (q *Queue) AddAttention(text string) { q.addAttention("", text) }

// addAttention adds an attention line; file names the rejected file in
// failed/ it is about, or is "".
func (q *Queue) addAttention(file, text string) {
	q.mu.Lock()
	q.recent = append(q.recent, attention{at: q.now(), file: file, text: text})
	if len(q.recent) > maxRecentAttention {
		q.recent = q.recent[len(q.recent)-maxRecentAttention:]
	}
	q.mu.Unlock()
	q.touched()
}

func (q *Queue) writeDashboard() {
	st, err := q.Snapshot()
	if err != nil {
		q.log.Warn().Err(err).Msg("gather status")
		return
	}
	// Views, rewritten within a second of every change: not synced.
	b, err := q.statusYAML.marshal(st)
	if err == nil {
		err = atomicfile.WriteUnsynced(q.layout.Status(), b, runtimeFileMode)
	}
	if err == nil {
		err = atomicfile.WriteUnsynced(q.layout.Dashboard(), []byte(renderDashboard(st)), runtimeFileMode)
	}
	if err != nil {
		q.log.Warn().Err(err).Msg("write dashboard")
	}
}

// renderDashboard is the Markdown people and agents read.
func renderDashboard(st Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# shogun dashboard\n\nUpdated %s · run %s · supervisor pid %d\n\n", st.UpdatedAt.Format(time.RFC3339), textsafe.Escape(st.RunID), st.Pid)
	if st.ConfigError != "" {
		b.WriteString("**The configuration files were not applied** (the supervisor runs on with the configuration it had; fix the files and they are applied at once):\n\n")
		for _, line := range strings.Split(st.ConfigError, "\n") {
			fmt.Fprintf(&b, "- %s\n", textsafe.Escape(line))
		}
		b.WriteString("\n")
	}
	if len(st.Blocked) > 0 {
		fmt.Fprintf(&b, "**The queue is blocked** (retrying by itself):\n\n")
		for _, x := range st.Blocked {
			fmt.Fprintf(&b, "- %s\n", textsafe.Escape(x))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Roles\n\n| role | state | task | queued | restarts |\n|---|---|---|---|---|\n")
	for _, r := range st.Roles {
		task := "—"
		if r.Task != nil {
			task = fmt.Sprintf("%s %s (%s)", cell(r.Task.ID), cell(r.Task.Title), cell(r.Task.Status))
		}
		state := r.State
		if !r.LimitedUntil.IsZero() {
			state += " until " + r.LimitedUntil.Local().Format("15:04")
		}
		if r.BackoffReason != "" {
			state += " · " + r.BackoffReason
		}
		if r.Budget != "" {
			state += " · " + r.Budget
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", cell(r.ID), cell(state), task, r.QueueDepth, r.Restarts)
	}
	b.WriteString("\n## Tasks\n\n")
	keys := make([]string, 0, len(st.Tasks))
	for k := range st.Tasks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		b.WriteString("No tasks yet.\n")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s: %d\n", textsafe.Escape(k), st.Tasks[k])
	}
	b.WriteString("\n## Recent reports\n\n")
	if len(st.Recent) == 0 {
		b.WriteString("None yet.\n")
	} else {
		b.WriteString("| time | role | task | result |\n|---|---|---|---|\n")
		for _, r := range st.Recent {
			fmt.Fprintf(&b, "| %s | %s | %s %s | %s: %s |\n", r.At.Format("15:04:05"), cell(r.Role), cell(r.TaskID), cell(r.Title), cell(r.Status), cell(r.Summary))
		}
	}
	b.WriteString("\n## Needs attention\n\n")
	if len(st.Attention) == 0 {
		b.WriteString("Nothing.\n")
	}
	for _, a := range st.Attention {
		fmt.Fprintf(&b, "- %s\n", textsafe.Escape(a))
	}
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cell keeps text on one table row, with control characters escaped (a
// history written by an older shogun may hold them).
func cell(s string) string {
	s = textsafe.Escape(strings.Join(strings.Fields(s), " "))
	s = strings.ReplaceAll(s, "|", "\\|")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}
