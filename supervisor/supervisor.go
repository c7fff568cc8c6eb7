// Package supervisor owns the life cycle of a workspace's roles: it starts each
// enabled role's program in its own PTY, derives readiness from the screen,
// types prompts by the typing rules, restarts crashed programs with backoff,
// and stops every process tree it started, on every platform.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/rolelog"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/usage"
	"github.com/shogun-dev/shogun/workspace"
)

// EventKind classifies an Event.
type EventKind string

// The kinds of events a supervisor emits.
const (
	EventState       EventKind = "state"       // a role changed state
	EventPrompted    EventKind = "prompted"    // a startup prompt was delivered
	EventUndelivered EventKind = "undelivered" // typed text was not confirmed
	EventLeftover    EventKind = "leftover"    // a process from a killed supervisor was cleaned up
)

// Event is something that happened to a role, for logs, history and dashboards.
type Event struct {
	Time    time.Time
	Role    string
	Kind    EventKind
	State   State
	Message string
	// Routine marks a ready ⇄ busy flip: it happens several times per task
	// and is not worth a row in the history.
	Routine bool
}

// Options configure a Supervisor. Zero durations take the defaults shown.
type Options struct {
	// Workspace is the workspace folder (absolute).
	Workspace string
	// Config is the loaded configuration.
	Config *config.Config
	// Roles are the ids of the roles to run; empty means every enabled role.
	Roles []string
	// Logger receives the supervisor's log.
	Logger zerolog.Logger
	// Env is the environment the roles inherit (default os.Environ()).
	Env []string
	// Executable is the shogun binary, exported to roles as SHOGUN_EXE.
	Executable string
	// OnEvent, when set, is called for every event, synchronously.
	OnEvent func(Event)

	// Backoff is the restart delay (default 1 s doubling to 60 s).
	Backoff RestartBackoff
	// StableAfter resets the backoff after this much running (default 30 s).
	StableAfter time.Duration
	// Settle is how long output must pause before a ready pattern counts (default 50 ms).
	Settle time.Duration
	// VerifyTimeout bounds each wait for a submit to be confirmed (default 3 s).
	VerifyTimeout time.Duration
	// HumanQuiet is how long after a person typed nothing is typed (default 5 s).
	HumanQuiet time.Duration
	// TreeGrace is how long leftovers in a process group get after SIGTERM (default 2 s).
	TreeGrace time.Duration
	// MemoryEvery is how often the memory of the roles' process trees is
	// measured, for their status and memory_max (default 2 s).
	MemoryEvery time.Duration
	// SandboxAvailable says whether the system has the sandbox of roles
	// with sandbox: (default sandbox.Available).
	SandboxAvailable func() (string, error)
	// AccountHistory keeps the accounts' usage limits across restarts;
	// nil keeps them in memory only.
	AccountHistory AccountHistory
}

// Supervisor runs the roles of one workspace.
type Supervisor struct {
	ws      string
	layout  workspace.Layout
	cfg     *config.Config
	log     zerolog.Logger
	env     []string
	exe     string
	onEvent func(Event)
	ledger  *Ledger
	logs    logSettings

	// mu guards the role set, which a live reload changes while the
	// roles run (AddRole, RemoveRole).
	mu    sync.Mutex
	roles []*Role
	byID  map[string]*Role
	// live are the roles whose goroutine runs or has yet to end: the
	// ones in roles, and the removed ones still stopping.
	live map[*Role]bool
	// runCtx is Run's context once Run has started the roles (nil
	// before); a role added then starts at once.
	runCtx   context.Context
	stopping bool // Run is stopping the roles: none may be added

	backoff       RestartBackoff
	stableAfter   time.Duration
	settle        time.Duration
	verifyTimeout time.Duration
	humanQuiet    time.Duration
	treeGrace     time.Duration
	memoryEvery   time.Duration
	scrollback    int
	// screens lends the roles' sessions their screen models: a team whose
	// roles sleep and wake starts programs all day, and each new model is
	// a 5 MB allocation (ptyhost.ScreenPool). Closed when Run ends.
	screens *ptyhost.ScreenPool
	// sandboxAvailable is Options.SandboxAvailable.
	sandboxAvailable func() (string, error)

	eventMu sync.Mutex
	// reapMu is held while a role's program is being spawned and whenever
	// adopted processes are reaped, so the reaper never mistakes a just
	// started child that os/exec will wait for for an adopted one.
	reapMu  sync.Mutex
	spawned map[int]bool // pids of role programs not yet waited for
	foreign int          // ForeignChildren calls running: reap nothing
	// cgroups holds each role's tree under its memory_max where a cgroup
	// v2 is delegated (nil: the memory watch does); under reapMu.
	cgroups *ptyhost.MemoryCgroups

	// slots bound the programs running at once (nil: no bound).
	slots *slots
	// accounts knows which accounts are limited until when.
	accounts *accountBook
	// workCheck says whether a role has work (SetWorkCheck).
	workMu    sync.Mutex
	workCheck func(role string) Work
}

// idleScreens is how many ended sessions' screen models wait for the next
// starts: enough for the roles that sleep and wake in the same moment.
const idleScreens = 4

// New prepares a supervisor for the selected roles; nothing starts until Run.
func New(opts Options) (*Supervisor, error) {
	if opts.Config == nil {
		return nil, errors.New("supervisor: no configuration")
	}
	s := &Supervisor{
		ws:            opts.Workspace,
		layout:        workspace.New(opts.Workspace),
		cfg:           opts.Config,
		log:           opts.Logger,
		env:           opts.Env,
		exe:           opts.Executable,
		onEvent:       opts.OnEvent,
		ledger:        OpenLedger(workspace.New(opts.Workspace).PidLedger()),
		logs:          logSettings{maxSizeMB: opts.Config.Settings.Logs.MaxSizeMB, maxFiles: opts.Config.Settings.Logs.MaxFiles},
		byID:          map[string]*Role{},
		live:          map[*Role]bool{},
		spawned:       map[int]bool{},
		backoff:       opts.Backoff,
		stableAfter:   orDuration(opts.StableAfter, 30*time.Second),
		settle:        orDuration(opts.Settle, 50*time.Millisecond),
		verifyTimeout: orDuration(opts.VerifyTimeout, 3*time.Second),
		humanQuiet:    orDuration(opts.HumanQuiet, 5*time.Second),
		treeGrace:     orDuration(opts.TreeGrace, 2*time.Second),
		memoryEvery:   orDuration(opts.MemoryEvery, 2*time.Second),
		scrollback:    opts.Config.Settings.Logs.ScrollbackKB * 1024,
		screens:       ptyhost.NewScreenPool(idleScreens),
	}
	s.accounts = newAccountBook(opts.AccountHistory, opts.Logger)
	if a := opts.Config.Settings.Agent; a.MaxRunning > 0 || len(a.MaxRunningPerCLI) > 0 {
		s.slots = newSlots(s, a.MaxRunning, a.MaxRunningPerCLI)
	}
	if s.backoff.Base == 0 {
		s.backoff.Base = time.Second
	}
	if s.backoff.Max == 0 {
		s.backoff.Max = 60 * time.Second
	}
	if s.env == nil {
		s.env = os.Environ()
	}
	if s.sandboxAvailable = opts.SandboxAvailable; s.sandboxAvailable == nil {
		s.sandboxAvailable = sandbox.Available
	}
	selected, err := selectRoles(opts.Config, opts.Roles)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.layout.Logs(), 0o755); err != nil {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	for _, rc := range selected {
		s.addLocked(rc)
	}
	return s, nil
}

// logSettings are how a role's log file rotates (settings logs:).
type logSettings struct{ maxSizeMB, maxFiles int }

// addLocked makes a role of rc, with its log file; s.mu is held or the
// supervisor not yet shared.
func (s *Supervisor) addLocked(rc config.Role) *Role {
	idx := newRoleLog(s.layout.RoleLog(rc.ID), s.logs)
	r := newRole(s, rc, idx)
	r.logIndex = idx
	s.roles = append(s.roles, r)
	s.byID[rc.ID] = r
	s.live[r] = true
	return r
}

// newRoleLog is a role's log at path, rotated as ls says, with its index.
func newRoleLog(path string, ls logSettings) *rolelog.Index {
	lj := &lumberjack.Logger{Filename: path, MaxSize: ls.maxSizeMB, MaxBackups: ls.maxFiles}
	return rolelog.NewIndex(pieceWriter{w: lj, max: logPiece})
}

// logPiece is the most a role's log takes in one write. lumberjack refuses
// a write larger than its whole file (max_size_mb, 1 MB at least) and
// writes none of it, and the terminal's output gathers into one write
// while the log lags: a burst of megabytes would be lost, not rotated.
const logPiece = 256 << 10

// pieceWriter writes to w at most max bytes at a time.
type pieceWriter struct {
	w   io.WriteCloser
	max int
}

// Close closes w.
func (p pieceWriter) Close() error { return p.w.Close() }

func (p pieceWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k, err := p.w.Write(b[:min(len(b), p.max)])
		n += k
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// ErrStopping means a role cannot be added: the supervisor is stopping.
var ErrStopping = errors.New("the supervisor is stopping")

// AddRole adds a role to a supervisor that may be running: once Run has
// started, the role starts at once. An id that is already supervised is
// an error.
func (s *Supervisor) AddRole(rc config.Role) (*Role, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[rc.ID]; ok {
		return nil, fmt.Errorf("add role %s: it is already supervised", rc.ID)
	}
	if s.stopping {
		return nil, fmt.Errorf("add role %s: %w", rc.ID, ErrStopping)
	}
	r := s.addLocked(rc)
	if s.runCtx != nil {
		s.startLocked(r)
	}
	s.log.Info().Str("role", rc.ID).Msg("role added")
	return r, nil
}

// RemoveRole stops a role's program, as a supervisor that stops does, and
// forgets the role; it returns once the program's process tree is gone.
// why is the reason its last state gives ("removed from config/roles.yaml").
// An unknown id is no error.
func (s *Supervisor) RemoveRole(id, why string) {
	s.mu.Lock()
	r, ok := s.byID[id]
	if ok {
		delete(s.byID, id)
		s.roles = slices.DeleteFunc(s.roles, func(x *Role) bool { return x == r })
	}
	started := r != nil && r.cancel != nil
	s.mu.Unlock()
	if !ok {
		return
	}
	if started {
		r.cancel(errors.New(why))
		<-r.done
	}
	s.mu.Lock()
	delete(s.live, r)
	s.mu.Unlock()
	if c, ok := r.output.(io.Closer); ok {
		_ = c.Close()
	}
	s.log.Info().Str("role", id).Str("why", why).Msg("role removed")
}

// startLocked starts r's goroutine under Run's context; s.mu is held.
func (s *Supervisor) startLocked(r *Role) {
	ctx, cancel := context.WithCancelCause(s.runCtx)
	r.cancel = cancel
	go func() {
		defer close(r.done)
		defer cancel(nil)
		r.run(ctx)
	}()
}

func orDuration(v, d time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return d
}

// selectRoles picks the enabled roles named in ids (all enabled ones when
// ids is empty). Naming an unknown or disabled role is an error.
func selectRoles(cfg *config.Config, ids []string) ([]config.Role, error) {
	enabled := cfg.Enabled()
	if len(ids) == 0 {
		if len(enabled) == 0 {
			return nil, errors.New("no enabled roles in config/roles.yaml")
		}
		return enabled, nil
	}
	var out []config.Role
	for _, id := range ids {
		rc, ok := cfg.Role(id)
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown role %q (roles: %s)", id, strings.Join(roleIDs(cfg.Roles), ", "))
		case !rc.Enabled:
			return nil, fmt.Errorf("role %q is disabled in config/roles.yaml", id)
		}
		out = append(out, rc)
	}
	return out, nil
}

func roleIDs(rs []config.Role) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	sort.Strings(ids)
	return ids
}

// Roles returns the supervised roles in configuration order (roles added
// while running last).
func (s *Supervisor) Roles() []*Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roles)
}

// Role returns the role with the given id.
func (s *Supervisor) Role(id string) (*Role, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	return r, ok
}

// Run cleans up leftovers of a killed predecessor, runs every role until ctx
// ends, then stops them all and returns once every process tree is gone.
func (s *Supervisor) Run(ctx context.Context) error {
	killed, err := s.ledger.Leftovers()
	if err != nil {
		s.log.Warn().Err(err).Msg("pid ledger")
	}
	for _, e := range killed {
		s.log.Warn().Str("role", e.Role).Int("pid", e.Pid).Msg("killed a leftover process of a previous supervisor")
		s.emit(Event{Time: time.Now(), Role: e.Role, Kind: EventLeftover, Message: fmt.Sprintf("killed leftover pid %d", e.Pid)})
	}
	if err := ptyhost.BecomeSubreaper(); err != nil {
		s.log.Debug().Err(err).Msg("not a subreaper")
	}
	cgroups := s.openMemoryCgroups()
	s.reapMu.Lock()
	s.cgroups = cgroups
	s.reapMu.Unlock()
	reapCtx, stopReaper := context.WithCancel(context.Background())
	reaperDone := make(chan struct{})
	go func() {
		defer close(reaperDone)
		s.reapLoop(reapCtx)
	}()
	memoryDone := make(chan struct{})
	go func() {
		defer close(memoryDone)
		s.memoryLoop(reapCtx)
	}()
	roomDone := make(chan struct{})
	go func() {
		defer close(roomDone)
		if s.slots != nil {
			s.slots.roomLoop(reapCtx)
		}
	}()

	// The roles with work take the slots first, then the first roles of
	// config/roles.yaml, as the docs say: left to their goroutines, the
	// race for them goes to whichever the scheduler runs first. The work
	// is asked before s.mu is taken: the work check reads the history.
	s.mu.Lock()
	order := slices.Clone(s.roles)
	s.mu.Unlock()
	order = s.slotOrderAtStart(order)
	s.mu.Lock()
	s.runCtx = ctx
	if s.slots != nil {
		for _, r := range order {
			s.slots.tryTake(r, r.conf().CLI)
		}
	}
	for _, r := range s.roles {
		s.startLocked(r)
	}
	s.mu.Unlock()
	<-ctx.Done()
	// Every role's context ends with ctx; wait for each, the ones being
	// removed included, and let none be added meanwhile.
	s.mu.Lock()
	s.stopping = true
	live := make([]*Role, 0, len(s.live))
	for r := range s.live {
		live = append(live, r)
	}
	s.mu.Unlock()
	for _, r := range live {
		<-r.done
	}
	s.stopAdopted()
	s.screens.Close()
	stopReaper()
	<-reaperDone
	<-memoryDone
	<-roomDone
	var errs []error
	for _, r := range s.Roles() {
		if c, ok := r.output.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	errs = append(errs, s.ledger.Clear())
	return errors.Join(errs...)
}

// reapLoop collects adopted processes (daemons an agent left behind, re-parented
// to the subreaper) that have exited, so they do not pile up as zombies. It
// looks when a child exits (SIGCHLD), and once a minute in case a signal was
// coalesced; an idle supervisor does no work here.
func (s *Supervisor) reapLoop(ctx context.Context) {
	exits := make(chan os.Signal, 1)
	ptyhost.NotifyChildExit(exits)
	defer ptyhost.StopNotify(exits)
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-exits:
		case <-t.C:
		}
		s.reapAdopted()
	}
}

// spawn starts a role's program and registers its pid as the supervisor's
// own child, atomically with respect to the reaper.
func (s *Supervisor) spawn(opts ptyhost.Options) (*ptyhost.Session, error) {
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	opts.Command.Cgroups = s.cgroups // used for a tree with a memory_max
	opts.Screens = s.screens
	sess, err := ptyhost.Open(opts)
	if err == nil {
		s.spawned[sess.Pid()] = true
	}
	return sess, err
}

// waited forgets a role program once os/exec has waited for it.
func (s *Supervisor) waited(pid int) {
	s.reapMu.Lock()
	delete(s.spawned, pid)
	s.reapMu.Unlock()
}

// adopted lists the children that the supervisor did not spawn itself.
func (s *Supervisor) adopted() []int {
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	return ptyhost.Adopted(s.spawned)
}

func (s *Supervisor) reapAdopted() {
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	if s.foreign > 0 {
		return // a child of ForeignChildren may be among them
	}
	ptyhost.ReapAdopted(ptyhost.AdoptedQuick(s.spawned))
}

// ForeignChildren runs fn, which starts child processes of its own and
// waits for them (git making a role's worktree during a reload). The
// supervisor reaps the children it did not start itself — daemons the
// agents left behind — and would take those too, before os/exec's Wait
// ("waitid: no child processes"); while fn runs it reaps none, and the
// adopted ones that exited meanwhile are reaped at the next look.
func (s *Supervisor) ForeignChildren(fn func()) {
	s.reapMu.Lock()
	s.foreign++
	s.reapMu.Unlock()
	defer func() {
		s.reapMu.Lock()
		s.foreign--
		s.reapMu.Unlock()
	}()
	fn()
}

// stopAdopted ends the processes re-parented to the supervisor, once every
// role has stopped: they belong to the agents and must not outlive shogun.
func (s *Supervisor) stopAdopted() {
	pids := s.adopted()
	if len(pids) == 0 {
		return
	}
	s.log.Info().Ints("pids", pids).Msg("stopping processes the agents left behind")
	ptyhost.SignalAdopted(pids, false)
	deadline := time.Now().Add(s.treeGrace)
	for time.Now().Before(deadline) {
		s.reapAdopted()
		if len(s.adopted()) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ptyhost.SignalAdopted(s.adopted(), true)
	for i := 0; i < 100 && len(s.adopted()) > 0; i++ {
		s.reapAdopted()
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Supervisor) emit(e Event) {
	if s.onEvent == nil {
		return
	}
	s.eventMu.Lock()
	defer s.eventMu.Unlock()
	s.onEvent(e)
}

// accountVars are the variables of the supervisor's environment that an
// account of the workspace takes values from: a settings pool's, a role's
// of the configuration, or one of a role supervised now (added or
// reconfigured since).
func (s *Supervisor) accountVars() map[string]bool {
	vars := map[string]bool{}
	add := func(list []config.Account) {
		for _, a := range list {
			for _, k := range a.From {
				vars[k] = true
			}
		}
	}
	for _, list := range s.cfg.Settings.Accounts.Pools {
		add(list)
	}
	for _, rc := range s.cfg.Roles {
		add(rc.Accounts)
	}
	s.mu.Lock()
	roles := slices.Clone(s.roles)
	s.mu.Unlock()
	for _, r := range roles {
		add(r.conf().Accounts)
	}
	return vars
}

// lookupEnv finds k in env (KEY=value entries).
func lookupEnv(env []string, k string) (string, bool) {
	for _, kv := range env {
		if name, v, ok := strings.Cut(kv, "="); ok && name == k {
			return v, true
		}
	}
	return "", false
}

// roleEnv is the environment of a role's program: the supervisor's, with
// TERM and the SHOGUN_* variables set so the agent and its hooks know who they
// are, then the role's own env entries. The variables any account of the
// workspace takes its values from (its API key's) are left out, but for
// those of acct, the account the program runs on: an agent cannot read
// another account's key from its environment.
func (s *Supervisor) roleEnv(rc config.Role, acct config.Account) []string {
	set := map[string]string{
		"TERM":               "xterm-256color",
		"SHOGUN_ROLE":        rc.ID,
		"SHOGUN_WORKSPACE":   s.ws,
		"SHOGUN_TASK_FILE":   s.layout.TaskFile(rc.ID),
		"SHOGUN_REPORT_FILE": s.layout.ReportFile(rc.ID),
	}
	if s.exe != "" {
		set["SHOGUN_EXE"] = s.exe
	}
	for k, v := range rc.Command.Env {
		set[k] = v
	}
	if rc.CLI == usage.CLICopilot {
		// Copilot CLI's tokens are only in its OpenTelemetry export:
		// to a file of the workspace, unless the role exports elsewhere.
		lookup := func(k string) (string, bool) {
			if v, ok := set[k]; ok {
				return v, true
			}
			return lookupEnv(s.env, k)
		}
		if p, add := usage.CopilotOTelFile(lookup, s.layout.CopilotOTel(rc.ID)); add {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				s.log.Warn().Err(err).Str("role", rc.ID).Str("path", p).Msg("create the folder of the copilot OpenTelemetry file; its tokens are not counted")
			} else {
				set[usage.CopilotOTelFileVar] = p
			}
		}
	}
	hidden := s.accountVars()
	for _, k := range acct.From {
		delete(hidden, k)
	}
	env := make([]string, 0, len(s.env)+len(set))
	for _, kv := range s.env {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := set[k]; !override && !hidden[k] {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+set[k])
	}
	return env
}
