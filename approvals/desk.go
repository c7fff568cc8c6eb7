// Package approvals decides, records and waits for the answers to what
// agents ask to do. A CLI's hook (`shogun hook claude`) hands the running
// supervisor an action; the Desk judges it by the policy in effect
// (config/policy.yaml, package policy) and answers at once, or, when the
// policy says ask, keeps the question open until a person answers it
// (`shogun answer`, the console, the API) or approvals.timeout passes, which
// denies it. Every decision, whoever made it, is a row of the history's
// approvals table (store.Approval).
//
// It is a package of its own because the control API and the console both
// serve the same open questions, and the team owns the one Desk they share.
package approvals

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/questions"
	"github.com/shogun-dev/shogun/store"
)

// Sentinel errors, for errors.Is.
var (
	// ErrNoPolicy means the workspace has no config/policy.yaml: the CLIs'
	// own permission settings decide, and the hook gives no opinion.
	ErrNoPolicy = errors.New("no approvals policy (config/policy.yaml) in this workspace")
	// ErrUnknownRole means the action came from a role the configuration
	// does not have.
	ErrUnknownRole = errors.New("unknown role")
	// ErrNoQuestion means nothing is waiting for the answer given.
	ErrNoQuestion = errors.New("no question is waiting")
	// ErrClosed means the desk has stopped taking questions.
	ErrClosed = errors.New("approvals desk closed")
)

// The bounds of the desk: an agent that asks and asks must not take the
// supervisor's memory, the history or the API's answers with it.
const (
	// MaxOpenPerRole is how many questions of one role may wait for a
	// person at once; one more is denied at once, without asking.
	MaxOpenPerRole = 10
	// MaxOpen is how many questions of all roles may wait at once.
	MaxOpen = 100
	// MaxStoredSubject bounds the subject of an approval in the history;
	// a longer one is cut, marked with how much was left out. An open
	// question keeps its whole subject in memory, for the person who
	// answers it.
	MaxStoredSubject = 4 << 10
	// maxRefusedSubject bounds the recorded subject of an ask refused for
	// being over MaxOpenPerRole or MaxOpen: a flood's rows stay small.
	maxRefusedSubject = 256
)

// Request is an action a role's CLI asks to take.
type Request struct {
	// Role is the role id (the CLI's SHOGUN_ROLE).
	Role string
	// CLI is the hook's format (claude); the record names the role's CLI.
	CLI string
	// Action is what it wants to do.
	Action policy.Action
}

// Options are what a Desk works with.
type Options struct {
	// Store is the history every decision is recorded in.
	Store *store.Store
	// RunID is the supervisor's run, recorded with each decision.
	RunID string
	// Config returns the configuration in effect, read at every question
	// so that a reloaded policy or time-out applies at once.
	Config func() *config.Config
	// TaskOf returns the role's task in flight, "" when none; may be nil.
	TaskOf func(role string) string
	// Asked is told of each question that waits for a person (the
	// "question" notification); may be nil.
	Asked func(store.Approval)
	// Waiting is told, each time a role's open questions change (one is
	// asked, or decided), which of that role's wait now, oldest first;
	// may be nil. Called without the desk's lock held.
	Waiting func(role string, open []store.Approval)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Desk holds the open questions of one running supervisor.
type Desk struct {
	opts Options

	waitingMu sync.Mutex // orders the calls of Options.Waiting

	mu     sync.Mutex
	open   map[int64]*question
	always map[string]int64 // alwaysKey → the approval answered "always"
	closed bool
}

// question is one action waiting for a person.
type question struct {
	approval store.Approval
	done     chan struct{} // closed once decided
	timer    *time.Timer
	deciding bool   // a decision is being written; guarded by Desk.mu
	always   string // what an "always" answer to it covers (alwaysKey)
}

// New returns a Desk, and closes the questions a previous run left open
// (its CLIs stopped waiting long ago).
func New(opts Options) (*Desk, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if _, err := opts.Store.CloseStaleApprovals(opts.RunID, opts.Now()); err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	return &Desk{opts: opts, open: map[int64]*question{}, always: map[string]int64{}}, nil
}

// Ask judges req by the policy in effect and records the decision. An
// allow or deny is returned decided; an ask is returned pending (Wait for
// it), after a person answered "always" for the same action earlier in
// this run, it is allowed at once.
func (d *Desk) Ask(req Request) (store.Approval, error) {
	cfg := d.opts.Config()
	if cfg.Policy == nil {
		return store.Approval{}, ErrNoPolicy
	}
	role, ok := cfg.Role(req.Role)
	if !ok {
		return store.Approval{}, fmt.Errorf("ask for %q: %w", req.Role, ErrUnknownRole)
	}
	now := d.opts.Now()
	// The role's preset names its CLI: the hook's word for itself may be
	// another CLI's (Copilot CLI runs Claude Code's hooks).
	cli := role.CLI
	if cli == "" {
		cli = req.CLI
	}
	a := store.Approval{AskedAt: now, RunID: d.opts.RunID, Role: role.ID, CLI: cli,
		Kind: string(req.Action.Kind), Subject: req.Action.Subject()}
	if d.opts.TaskOf != nil {
		a.TaskID = d.opts.TaskOf(role.ID)
	}
	v := cfg.Policy.Decide(role.ID, placeOf(cfg, role), req.Action)
	a.Rule, a.Reason = v.Rule, v.Reason

	key := alwaysKey(a, folderOf(placeOf(cfg, role), req.Action))
	a, opened, err := d.record(a, v, key, cfg.Settings.Approvals.Timeout)
	if err != nil || !opened {
		return a, err
	}
	if d.opts.Asked != nil {
		d.opts.Asked(a)
	}
	d.tellWaiting(a.Role)
	return a, nil
}

// record decides a by the policy's verdict v, the answers "always" given
// (key: what one covers) and the bounds, records it, and opens a question
// when a person is to answer (opened), denied after timeout. The bound is
// checked and the question opened under one lock, so that asks at once
// cannot pass it.
func (d *Desk) record(a store.Approval, v policy.Verdict, key string, timeout time.Duration) (_ store.Approval, opened bool, _ error) {
	now := a.AskedAt
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return store.Approval{}, false, ErrClosed
	}
	stored := MaxStoredSubject
	switch {
	case v.Decision == policy.Ask && d.always[key] != 0:
		a.Decision, a.DecidedAt, a.Asked, a.DecidedBy = store.ApprovalAllow, now, true, store.DecidedByPerson
		a.Note = fmt.Sprintf("answered always with approval %d", d.always[key])
	case v.Decision == policy.Ask:
		if why := d.overBound(a.Role); why != "" {
			a.Decision, a.DecidedAt, a.Asked, a.DecidedBy = store.ApprovalDeny, now, false, store.DecidedByPolicy
			a.Rule, a.Reason = "", why
			stored = maxRefusedSubject
			break
		}
		a.Decision, a.Asked = store.ApprovalPending, true
	default:
		a.Decision, a.DecidedAt, a.DecidedBy = string(v.Decision), now, store.DecidedByPolicy
	}
	whole := a.Subject
	a.Subject = CutSubject(whole, stored)
	id, err := d.opts.Store.AddApproval(a)
	if err != nil {
		return store.Approval{}, false, err
	}
	a.ID = id
	if a.Decision != store.ApprovalPending {
		return a, false, nil
	}
	a.Subject = whole // the person answering reads it whole
	q := &question{approval: a, done: make(chan struct{}), always: key}
	q.timer = time.AfterFunc(timeout, func() {
		_, _ = d.decide(id, store.ApprovalDeny, store.DecidedByTimeout, "", fmt.Sprintf("nobody answered within %s", timeout))
	})
	d.open[id] = q
	return a, true, nil
}

// tellWaiting tells Options.Waiting what role waits on now.
func (d *Desk) tellWaiting(role string) {
	if d.opts.Waiting == nil {
		return
	}
	// Read and told under one lock: a list read earlier is never told
	// after one read later.
	d.waitingMu.Lock()
	defer d.waitingMu.Unlock()
	var mine []store.Approval
	for _, a := range d.Open() {
		if a.Role == role {
			mine = append(mine, a)
		}
	}
	d.opts.Waiting(role, mine)
}

// placeOf is where role works: its command's cwd, which the live
// configuration has set to its worktree when it has one; a role without a
// worktree works in the main checkout, on the base branch.
func placeOf(cfg *config.Config, role config.Role) policy.Place {
	home, _ := os.UserHomeDir()
	return policy.Place{Dir: role.Command.Cwd, Workspace: cfg.Workspace, OnBaseBranch: role.Worktree == nil, Home: home}
}

// overBound says why a new question of role cannot wait for a person
// (too many wait already), "" when it can. Called with d.mu held.
func (d *Desk) overBound(role string) string {
	mine := 0
	for _, q := range d.open {
		if q.approval.Role == role {
			mine++
		}
	}
	switch {
	case mine >= MaxOpenPerRole:
		return fmt.Sprintf("denied without asking: %d questions of %s already wait for a person (at most %d per role); answer them first (shogun questions)",
			mine, role, MaxOpenPerRole)
	case len(d.open) >= MaxOpen:
		return fmt.Sprintf("denied without asking: %d questions already wait for a person (at most %d in all); answer them first (shogun questions)",
			len(d.open), MaxOpen)
	}
	return ""
}

// CutSubject is subject cut to at most n bytes (on a rune boundary) with a
// marker that says how much was left out; subject itself when it fits.
func CutSubject(subject string, n int) string {
	if len(subject) <= n {
		return subject
	}
	end := n
	for end > 0 && !utf8.RuneStart(subject[end]) {
		end--
	}
	return fmt.Sprintf("%s… [%d more bytes not kept]", subject[:end], len(subject)-end)
}

// alwaysKey is what an "always" answer covers: the same action of the
// same role in the same folder (rm -rf build means another build
// elsewhere).
func alwaysKey(a store.Approval, folder string) string {
	return a.Role + "\x00" + a.Kind + "\x00" + folder + "\x00" + a.Subject
}

// folderOf is the folder an action is taken in: the CLI's own, else the
// role's working directory.
func folderOf(place policy.Place, a policy.Action) string {
	if a.Cwd == "" {
		return filepath.Clean(place.Dir)
	}
	if !filepath.IsAbs(a.Cwd) {
		return filepath.Join(place.Dir, a.Cwd)
	}
	return filepath.Clean(a.Cwd)
}

// Wait returns approval id once it is decided, or as it is when ctx ends
// first (still pending).
func (d *Desk) Wait(ctx context.Context, id int64) (store.Approval, error) {
	d.mu.Lock()
	q, open := d.open[id]
	d.mu.Unlock()
	if open {
		select {
		case <-q.done:
		case <-ctx.Done():
		}
	}
	return d.opts.Store.Approval(id)
}

// Answer is a person's answer to an open question: allow or deny, and
// with always an allow that also covers the same action of the same role
// in the same folder for the rest of the run. via says where it was given ("cli",
// "console", "api").
func (d *Desk) Answer(id int64, allow, always bool, via, note string) (store.Approval, error) {
	decision := store.ApprovalDeny
	if allow {
		decision = store.ApprovalAllow
	}
	// The key was made when it was asked, from the whole action, not
	// the history's cut subject.
	d.mu.Lock()
	var key string
	if q, ok := d.open[id]; ok {
		key = q.always
	}
	d.mu.Unlock()
	a, err := d.decide(id, decision, store.DecidedByPerson, via, note)
	if err != nil {
		return a, err
	}
	if allow && always && key != "" {
		d.mu.Lock()
		d.always[key] = a.ID
		d.mu.Unlock()
	}
	return a, nil
}

// decide closes an open question; only the first decision counts. The
// question stays open until its decision is written, so that a Wait
// begun meanwhile waits for it rather than reading it still pending.
func (d *Desk) decide(id int64, decision, by, via, note string) (store.Approval, error) {
	d.mu.Lock()
	q, ok := d.open[id]
	taken := ok && q.deciding
	if ok && !taken {
		q.deciding = true
		q.timer.Stop()
	}
	d.mu.Unlock()
	switch {
	case taken:
		return store.Approval{}, fmt.Errorf("answer approval %d: %w", id, store.ErrApprovalDecided)
	case !ok:
		if _, err := d.opts.Store.Approval(id); err != nil {
			return store.Approval{}, fmt.Errorf("answer approval %d: %w", id, ErrNoQuestion)
		}
		return store.Approval{}, fmt.Errorf("answer approval %d: %w", id, store.ErrApprovalDecided)
	}
	err := d.opts.Store.DecideApproval(id, decision, by, via, note, d.opts.Now())
	d.mu.Lock()
	delete(d.open, id)
	d.mu.Unlock()
	close(q.done)
	d.tellWaiting(q.approval.Role)
	if err != nil {
		return store.Approval{}, err
	}
	return d.opts.Store.Approval(id)
}

// Screen records a person's answer to a question a CLI showed on its own
// screen (package questions), typed by the supervisor: it is a decision
// like the others, with the dialog's kind (permission, trust …) as its
// kind and what it asked about as its subject.
func (d *Desk) Screen(role, cli string, q questions.Question, option int, via, note string) (store.Approval, error) {
	now := d.opts.Now()
	subject := q.Subject
	if subject == "" {
		subject = q.Prompt
	}
	a := store.Approval{AskedAt: now, DecidedAt: now, RunID: d.opts.RunID, Role: role, CLI: cli, Kind: string(q.Kind),
		Subject: CutSubject(subject, MaxStoredSubject), Decision: store.ApprovalAllow, Asked: true, DecidedBy: store.DecidedByPerson, Via: via, Note: note,
		Reason: "on screen: " + q.Options[option].Label}
	if q.Options[option].Answer == questions.No {
		a.Decision = store.ApprovalDeny
	}
	if d.opts.TaskOf != nil {
		a.TaskID = d.opts.TaskOf(role)
	}
	id, err := d.opts.Store.AddApproval(a)
	if err != nil {
		return store.Approval{}, err
	}
	a.ID = id
	return a, nil
}

// Open lists the questions waiting for a person, oldest first.
func (d *Desk) Open() []store.Approval {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]store.Approval, 0, len(d.open))
	for _, q := range d.open {
		if !q.deciding {
			out = append(out, q.approval)
		}
	}
	slices.SortFunc(out, func(a, b store.Approval) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Close denies every open question (the supervisor is stopping: no one
// will answer them) and takes no more.
func (d *Desk) Close() {
	d.mu.Lock()
	d.closed = true
	ids := make([]int64, 0, len(d.open))
	for id := range d.open {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	for _, id := range ids {
		_, _ = d.decide(id, store.ApprovalDeny, store.DecidedByShutdown, "", "the supervisor stopped")
	}
}

// Withdraw denies the open questions of role: its program ended, and with
// it the hook that waited for the answer, so nobody is left to tell (and
// the role must not stay waiting on them). It returns how many.
func (d *Desk) Withdraw(role, why string) int {
	d.mu.Lock()
	var ids []int64
	for id, q := range d.open {
		if q.approval.Role == role {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	n := 0
	for _, id := range ids {
		if _, err := d.decide(id, store.ApprovalDeny, store.DecidedByShutdown, "", why); err == nil {
			n++
		}
	}
	return n
}
