package agentsim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/workspace"
)

// command is a command file as section 5 of DESIGN.md describes it, with the
// fields a karo fills in. It is written, never read, by the agent.
type command struct {
	ID    string   `yaml:"id"`
	To    string   `yaml:"to"`
	From  string   `yaml:"from"`
	Title string   `yaml:"title"`
	Body  string   `yaml:"body"`
	Tags  []string `yaml:"tags,omitempty"`
	// Parent is the task the command continues (Options.Bounce).
	Parent string `yaml:"parent,omitempty"`
}

// delegator is the handler of an agent that works like a karo: it splits a task
// into one command per role and hands them down through the command queue, so
// the demo and the tests see work flow from one agent to others and back.
//
// Its commands have ids derived from the task, and it remembers which it has
// written, so a task delivered twice is not handed down twice: the supervisor
// would drop a second command with the same id anyway, but one that is never
// written costs nobody anything.
type delegator struct {
	roles    []string // the roles handed a part each, in order
	self     string   // the agent's own role: the commands' from
	dir      string   // the commands folder, absolute
	workTime time.Duration
	fail     bool

	mu      sync.Mutex
	written map[string]bool // ids of commands this process has written
}

func newDelegator(roles []string, self, ws string, workTime time.Duration, fail bool) *delegator {
	return &delegator{
		roles:    roles,
		self:     self,
		dir:      workspace.New(ws).Commands(),
		workTime: workTime,
		fail:     fail,
		written:  make(map[string]bool),
	}
}

// handle takes workTime, as planning the split would, then writes the commands
// that are not written yet and hands back the task to wait for their reports.
func (d *delegator) handle(ctx context.Context, t *task) (report, *handoff, error) {
	if err := takeTime(ctx, d.workTime); err != nil {
		return report{}, nil, err
	}
	h := &handoff{t: t, by: d.self, fail: d.fail}
	n := len(d.roles)
	for i, role := range d.roles {
		c := command{
			ID:    t.TaskID + "-" + role,
			To:    role,
			From:  d.self,
			Title: partTitle(t.Title, i+1, n),
			Body:  partBody(t.Body, i+1, n, d.self),
			Tags:  t.Tags,
		}
		name := fileSafe(fmt.Sprintf("%s-%s-%d", d.self, t.TaskID, i+1))
		written, err := d.write(name, c)
		if err != nil {
			return report{}, nil, fmt.Errorf("hand %q to %s: %w", c.Title, role, err)
		}
		h.parts = append(h.parts, part{role: role, title: c.Title, id: c.ID, written: written})
	}
	return report{}, h, nil
}

// write writes c as name.yaml in the commands folder, through a dotfile the
// supervisor ignores so that it never reads half a command. It reports whether
// it wrote anything: a command already written, by this process or by one
// before it whose file is still waiting, is left alone.
func (d *delegator) write(name string, c command) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	final := filepath.Join(d.dir, name+".yaml")
	if d.written[c.ID] {
		return false, nil
	}
	if _, err := os.Lstat(final); err == nil {
		d.written[c.ID] = true
		return false, nil
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return false, err
	}
	if err := atomicfile.Write(final, data, 0o644); err != nil {
		return false, err
	}
	d.written[c.ID] = true
	return true, nil
}

// partBody is the task's body with a line saying which part this is, so the
// role doing it knows the rest is done elsewhere.
func partBody(body string, i, n int, by string) string {
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + fmt.Sprintf("Part %d of %d, handed down by %s.\n", i, n, by)
}

// fileSafe keeps a file name portable: task ids and role names come from
// outside, and a slash or a colon in them must not make a path.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '_'
	}, s)
}

// A handoff is a task whose parts were handed to other roles. The agent keeps
// it, idle, until every one of them has reported, then writes the task's own
// report. It belongs to the agent's goroutine once a handler returns it.
type handoff struct {
	t     *task
	by    string // the role that handed it down
	fail  bool
	parts []part
}

// A part is one command of a handoff.
type part struct {
	role     string
	title    string
	id       string
	written  bool // written by this delivery of the task, not an earlier one
	reported bool
}

// Strengths of a notification's match with a part (see handoff.match).
const (
	noMatch    = iota
	roleMatch  // from a role the part was handed to
	titleMatch // from that role, naming the part's title
)

// match says which part a submitted line reports on, and how surely. A line
// is a notification when it starts with "Report from <role>", as the
// supervisor's notify template does; it matches a part still waiting for that
// role, and names it for sure when it quotes the part's title too. A line with
// the title of a part already reported matches it as well, so that a repeated
// notification is recognised as such rather than credited to another task.
func (h *handoff) match(line string) (int, int) {
	line = strings.TrimSpace(line)
	for i, p := range h.parts {
		if !fromRole(line, p.role) {
			continue
		}
		switch {
		case strings.Contains(line, p.title):
			return i, titleMatch
		case !p.reported:
			return i, roleMatch
		}
	}
	return -1, noMatch
}

// fromRole reports whether line is a notification from role: "Report from
// ashigaru1" must not be taken for a report from ashigaru10.
func fromRole(line, role string) bool {
	rest, ok := strings.CutPrefix(line, "Report from "+role)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_')
}

// waitingFor lists the roles whose reports are still missing.
func (h *handoff) waitingFor() []string {
	var roles []string
	for _, p := range h.parts {
		if !p.reported {
			roles = append(roles, p.role)
		}
	}
	return roles
}

func (h *handoff) complete() bool { return len(h.waitingFor()) == 0 }

// partTitle names part i of n of a task; a task handed down whole keeps its title.
func partTitle(title string, i, n int) string {
	if n == 1 {
		return title
	}
	return fmt.Sprintf("%s (part %d of %d)", title, i, n)
}

// report is the task's own report, once all parts are in: it names every
// role so that whoever reads it can follow the work down.
func (h *handoff) report() report {
	var b strings.Builder
	fmt.Fprintf(&b, "Simulated agent %s handed %q down in %d parts, each reported:\n", h.by, h.t.Title, len(h.parts))
	for _, p := range h.parts {
		fmt.Fprintf(&b, "- %s: %s (command %s)\n", p.role, p.title, p.id)
	}
	how := fmt.Sprintf("%d parts", len(h.parts))
	if len(h.parts) == 1 {
		how = "handed to " + h.parts[0].role
	}
	r := report{
		TaskID:  h.t.TaskID,
		Status:  "done",
		Summary: fmt.Sprintf("Done: %s (%s)", h.t.Title, how),
	}
	if h.fail {
		r.Status = "failed"
		r.Summary = fmt.Sprintf("Failed: %s (%s)", h.t.Title, how)
		fmt.Fprintf(&b, "Simulated agent %s was told to fail it all the same.\n", h.by)
	}
	r.Details = b.String()
	return r
}
