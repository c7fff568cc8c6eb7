package agentsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/gitwork"
)

// maxTaskSize bounds what the agent reads, as the supervisor bounds commands.
const maxTaskSize = 1 << 20

// task is the part of a task file the agent needs. Unknown fields are ignored:
// an agent reads what it understands, and the supervisor may add fields.
type task struct {
	TaskID   string  `yaml:"task_id"`
	Title    string  `yaml:"title"`
	Body     string  `yaml:"body"`
	ReportTo string  `yaml:"report_to"`
	Role     string  `yaml:"role"`
	From     string  `yaml:"from"`
	Tags     tagList `yaml:"tags"`

	path       string // the task file, absolute
	reportPath string // ReportTo, absolute
}

func (t *task) validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"task_id", t.TaskID}, {"title", t.Title}, {"body", t.Body}, {"report_to", t.ReportTo},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// tagList is a task's tags. An agent reads what it understands, so a single
// tag written as a scalar is a list of one and anything stranger is no tags:
// odd tags never make a task unreadable.
type tagList []string

// UnmarshalYAML takes a list of scalars or one scalar, and ignores the rest.
func (l *tagList) UnmarshalYAML(n *yaml.Node) error {
	*l = nil
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!null" && n.Value != "" {
			*l = tagList{n.Value}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Tag != "!!null" && c.Value != "" {
				*l = append(*l, c.Value)
			}
		}
	}
	return nil
}

// report is the report file the agent writes (section 5 of DESIGN.md).
type report struct {
	TaskID  string   `yaml:"task_id"`
	Status  string   `yaml:"status"`
	Summary string   `yaml:"summary"`
	Details string   `yaml:"details,omitempty"`
	Files   []string `yaml:"files,omitempty"`
}

// A taskHandler carries out one task and says how it went: with the report,
// or with a handoff when it passed the work on and the report has to wait for
// other roles' reports (a karo writing command files for ashigaru). Loading the
// task, writing the report and hearing the notifications a handoff waits for
// are left to the agent, so a handler only does the work. handle runs on a
// goroutine of its own and must return promptly once ctx is done: that is how
// Escape interrupts the work.
type taskHandler interface {
	handle(ctx context.Context, t *task) (report, *handoff, error)
}

// simulatedWork is the handler of a plain agent: it takes workTime, then
// reports done, or failed if told to fail.
type simulatedWork struct {
	workTime time.Duration
	fail     bool
	role     string
	commit   string   // Options.CommitWork
	trespass []string // Options.Trespass
}

func (w simulatedWork) handle(ctx context.Context, t *task) (report, *handoff, error) {
	if err := takeTime(ctx, w.workTime); err != nil {
		return report{}, nil, err
	}
	r := report{
		TaskID:  t.TaskID,
		Status:  "done",
		Summary: "Done: " + t.Title,
		Details: fmt.Sprintf("Simulated agent %s worked on %q for %v.\n", w.role, t.Title, w.workTime),
	}
	if w.fail {
		r.Status = "failed"
		r.Summary = "Failed: " + t.Title
		r.Details = fmt.Sprintf("Simulated agent %s was told to fail %q.\n", w.role, t.Title)
		return r, nil, nil
	}
	for _, try := range w.trespass {
		r.Details += trespass(try) + "\n"
	}
	if w.commit != "" {
		commit, err := commitWork(ctx, w.role, w.commit, t)
		if err != nil {
			return report{}, nil, err
		}
		r.Files = []string{w.commit}
		r.Details += fmt.Sprintf("Wrote %s and committed it as %s.\n", w.commit, commit)
	}
	return r, nil, nil
}

// commitWork writes the work file for t in the working directory and
// commits it, returning the commit.
func commitWork(ctx context.Context, role, file string, t *task) (string, error) {
	g := gitwork.Git{}
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", "agent-sim " + role}, {"GIT_AUTHOR_EMAIL", "agent-sim@localhost"},
		{"GIT_COMMITTER_NAME", "agent-sim " + role}, {"GIT_COMMITTER_EMAIL", "agent-sim@localhost"}} {
		if _, set := os.LookupEnv(kv[0]); !set {
			g.Env = append(g.Env, kv[0]+"="+kv[1])
		}
	}
	content := fmt.Sprintf("# %s\n\n%s worked on %s.\n", t.Title, role, t.TaskID)
	path := filepath.FromSlash(file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("commit work: %w", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("commit work: %w", err)
	}
	if _, err := g.Run(ctx, ".", "add", "--", file); err != nil {
		return "", fmt.Errorf("commit work: %w", err)
	}
	// A task done again (delivered once more after a restart) may write
	// what is committed already: then there is nothing new to commit.
	if _, err := g.Run(ctx, ".", "diff", "--cached", "--quiet", "--", file); err != nil {
		if _, err := g.Run(ctx, ".", "commit", "-q", "-m", t.TaskID+": "+t.Title, "--", file); err != nil {
			return "", fmt.Errorf("commit work: %w", err)
		}
	}
	head, err := g.Head(ctx, ".")
	if err != nil {
		return "", fmt.Errorf("commit work: %w", err)
	}
	return head, nil
}

// trespass makes one try of Options.Trespass and says how it went:
// "read PATH: ok" or "write PATH: <the error>".
func trespass(try string) string {
	kind, path, _ := strings.Cut(try, ":")
	file := filepath.FromSlash(os.ExpandEnv(path))
	var err error
	if kind == "read" {
		_, err = os.ReadFile(file)
	} else {
		var f *os.File
		if f, err = os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, err = f.WriteString("# written by agent-sim\n")
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		return kind + " " + path + ": " + err.Error()
	}
	return kind + " " + path + ": ok"
}

// takeTime is the time work takes; it ends early with ctx's error.
func takeTime(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// findTask looks for a task file named in a submitted line, the way an agent
// follows "read runtime/queue/tasks/ashigaru1.yaml". It returns the first YAML
// path that is a task, the reports the line names before it (a notification
// says "read <report>": a report is read as one, not taken for a broken
// task), and a note for each named YAML file that is neither.
func findTask(line string) (*task, []report, []string) {
	var (
		reports []report
		notes   []string
	)
	for _, word := range strings.Fields(line) {
		p := strings.TrimRight(strings.TrimLeft(word, "\"'`([{<"), "\"'`)]}>.,;:!?")
		lower := strings.ToLower(p)
		if !strings.HasSuffix(lower, ".yaml") && !strings.HasSuffix(lower, ".yml") {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		t, err := loadTask(p)
		if err == nil {
			return t, reports, notes
		}
		if r, ok := loadReport(p); ok {
			reports = append(reports, r)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s is not a task file: %v", p, err))
	}
	return nil, reports, notes
}

// loadReport reads a report file (task_id and status set, as the protocol
// asks); ok is false for anything else.
func loadReport(path string) (report, bool) {
	data, err := readSmall(path)
	if err != nil {
		return report{}, false
	}
	var r report
	if yaml.Unmarshal(data, &r) != nil || strings.TrimSpace(r.TaskID) == "" || strings.TrimSpace(r.Status) == "" {
		return report{}, false
	}
	return r, true
}

// readSmall reads a file the agent was pointed at, up to maxTaskSize.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTaskSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTaskSize {
		return nil, errors.New("larger than 1 MiB")
	}
	return data, nil
}

func loadTask(path string) (*task, error) {
	data, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	var t task
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	if t.path, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	// report_to is relative to the working directory (the workspace the
	// supervisor starts agents in), or absolute (a role in a worktree).
	if t.reportPath, err = filepath.Abs(t.ReportTo); err != nil {
		return nil, err
	}
	return &t, nil
}

// writeReport writes r to path as the protocol asks: into path.tmp, then
// renamed, so the supervisor never reads half a report.
func writeReport(path string, r report) error {
	data, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}
