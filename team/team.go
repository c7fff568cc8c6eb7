// Package team runs a workspace: the supervisor with its roles, the file
// queue, and the history they record, wired together. `shogun start`, the
// demo and the integration tests share it, so cmd/shogun stays a thin layer
// of flags and printing, and no test wires the parts differently from users.
package team

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/questions"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

// Options configure a Team.
type Options struct {
	// Config is the loaded workspace configuration.
	Config *config.Config
	// Roles restricts the run to these role ids; empty runs every enabled role.
	Roles []string
	// Logger receives the log of every part.
	Logger zerolog.Logger
	// Executable is the shogun binary, exported to roles as SHOGUN_EXE.
	Executable string
	// OnEvent, when set, sees every supervisor event.
	OnEvent func(supervisor.Event)
	// Tune, when set, adjusts the supervisor's options (tests use faster timings).
	Tune func(*supervisor.Options)
	// NewHistory allows creating a new, empty history database although the
	// workspace's archive shows an earlier one existed (ErrHistoryMissing).
	NewHistory bool
	// HistoryCheck is how often the database file is checked for deletion
	// or replacement (default 3 s).
	HistoryCheck time.Duration
	// AwakeLinger is how long the machine is kept awake after the last
	// role stopped working (default 30 s).
	AwakeLinger time.Duration
	// Git runs git for role worktrees and reports' HEAD commits (default
	// gitwork.New()).
	Git *gitwork.Git
	// PruneAfter is how long after the start the history is first pruned
	// of events and log records older than data.retain (default 1 min);
	// then it is pruned daily.
	PruneAfter time.Duration
	// StoreOptions are passed to store.Open: the command line shows the
	// progress of building the search index of an existing history, and
	// lets Ctrl-C interrupt it.
	StoreOptions []store.Option
	// Lookup supplies the ${VAR} values when the configuration is loaded
	// again (live configuration); nil means os.LookupEnv, as for
	// config.Load.
	Lookup func(string) (string, bool)
	// ConfigSettle and ConfigPoll tune the configuration watcher: how long
	// the files must be left alone before a reload (default 300 ms), and
	// how often they are looked at without an event (default 2 s).
	ConfigSettle, ConfigPoll time.Duration
	// UsageEvery is how often the roles' CLI records are read for tokens
	// (default 30 s; also when a task closes and when the team stops).
	UsageEvery time.Duration
}

// Team is a workspace's supervisor, queue and history.
type Team struct {
	st  *store.Store
	sup *supervisor.Supervisor
	q   *queue.Queue
	run store.Run
	log zerolog.Logger

	skillsMu   sync.Mutex
	skills     skills.ScanOptions
	skillsOn   bool          // skills.enabled
	scanWanted chan struct{} // a report arrived; scan when skills are enabled

	notifier     *notify.Notifier
	desk         *approvals.Desk // the approvals asked of the policy
	stateChanged chan struct{}   // a role changed state (keep_awake)
	// lastStart is when a role's program last started (Unix ns): the
	// supervisor writes its CLI's configuration under runtime/state/cli
	// then, which the tamper watch takes as shogun's own change.
	lastStart   atomic.Int64
	keepAwakeOn bool
	awakeLinger time.Duration

	historyCheck time.Duration
	retain       time.Duration // data.retain; 0 keeps everything
	pruneAfter   time.Duration
	haltMu       sync.Mutex
	halted       error // why the queue stopped while the roles run on

	// git makes the worktrees of roles a reload adds; heads reads the
	// HEAD commit of a role's folder for its reports (headCommits of the
	// roles in effect; nil: no role works in a repository).
	git   gitwork.Git
	heads atomic.Pointer[func(string) string]

	// usageWanted asks for the roles' tokens to be read now (a task
	// closed); usageEvery is how often they are read anyway; supEnv is
	// the supervisor's environment when a test set it (nil: the process's).
	usageWanted chan struct{}
	usageEvery  time.Duration
	supEnv      []string

	// cfgMu and stateMu guard live (see liveConfig).
	cfgMu                    sync.Mutex
	stateMu                  sync.Mutex
	live                     liveConfig
	configSettle, configPoll time.Duration
}

// Open opens the history, records a new run and prepares the roles and the
// queue. Nothing runs until Run. Close releases the history.
func Open(opts Options) (*Team, error) {
	cfg := opts.Config
	if err := CheckHistory(cfg, opts.NewHistory); err != nil {
		return nil, err
	}
	g := gitwork.New()
	if opts.Git != nil {
		g = *opts.Git
	}
	// Roles with a worktree run in it from here on: the supervisor and
	// the queue both see their cwd there.
	cfg, err := prepareWorktrees(cfg, opts.Roles, g, opts.Logger)
	if err != nil {
		return nil, err
	}
	opts.Config = cfg
	opts.Git = &g
	if err := privateHistoryFolder(cfg); err != nil {
		return nil, err
	}
	st, err := store.Open(cfg.Settings.Data.SQLitePath, opts.StoreOptions...)
	if err != nil {
		return nil, err
	}
	t := &Team{st: st, log: opts.Logger, historyCheck: opts.HistoryCheck, git: g,
		retain: cfg.Settings.Data.Retain, pruneAfter: opts.PruneAfter,
		stateChanged: make(chan struct{}, 1), usageWanted: make(chan struct{}, 1), usageEvery: opts.UsageEvery,
		keepAwakeOn: cfg.Settings.KeepAwake, awakeLinger: opts.AwakeLinger,
		notifier: notify.New(notify.Options{
			Command: cfg.Settings.Notify.Command, Webhook: cfg.Settings.Notify.Webhook,
			Dir: cfg.Workspace, Logger: opts.Logger,
		}),
	}
	if t.awakeLinger <= 0 {
		t.awakeLinger = awakeLinger
	}
	if t.historyCheck <= 0 {
		t.historyCheck = historyCheckEvery
	}
	if t.pruneAfter <= 0 {
		t.pruneAfter = pruneAfter
	}
	if t.usageEvery <= 0 {
		t.usageEvery = usageEvery
	}
	t.configSettle, t.configPoll = opts.ConfigSettle, opts.ConfigPoll
	if t.configSettle <= 0 {
		t.configSettle = configSettle
	}
	if t.configPoll <= 0 {
		t.configPoll = configPoll
	}
	t.live = liveConfig{cur: cfg, lookup: opts.Lookup, seen: readVersions(cfg.Workspace), changed: make(chan struct{})}
	if len(opts.Roles) > 0 {
		t.live.selected = map[string]bool{}
		for _, id := range opts.Roles {
			t.live.selected[id] = true
		}
	}
	if err := seedTaskNumbers(st, cfg.Workspace); err != nil {
		st.Close()
		return nil, err
	}
	if err := t.open(opts); err != nil {
		st.Close()
		return nil, err
	}
	return t, nil
}

func (t *Team) open(opts Options) error {
	cfg := opts.Config
	now := time.Now()
	run, err := t.st.StartRun(os.Getpid(), cfg.Workspace, now)
	if err != nil {
		return err
	}
	t.run = run
	if err := t.st.SyncRoles(roleInfos(cfg), now); err != nil {
		return err
	}
	sopts := supervisor.Options{
		Workspace:  cfg.Workspace,
		Config:     cfg,
		Roles:      opts.Roles,
		Logger:     opts.Logger,
		Executable: opts.Executable,
		OnEvent:    func(e supervisor.Event) { t.onEvent(e, opts.OnEvent) },
		// Which account is limited until when survives a restart.
		AccountHistory: accountHistory{t.st},
	}
	if opts.Tune != nil {
		opts.Tune(&sopts)
	}
	t.supEnv = sopts.Env
	if t.sup, err = supervisor.New(sopts); err != nil {
		return err
	}
	agents := map[string]queue.Agent{}
	for _, r := range t.sup.Roles() {
		agents[r.ID()] = r
		if err := t.st.RecordLog(run.ID, r.ID(), workspace.LogsDir+"/"+r.ID()+".log", now); err != nil {
			return err
		}
	}
	t.scanWanted = make(chan struct{}, 1)
	qopts := queue.Options{Config: cfg, Store: t.st, Agents: agents, RunID: run.ID, Logger: opts.Logger,
		Notify: t.Notify, HeadCommit: t.headCommit}
	t.setHeads(t.headCommits(cfg))
	t.setSkills(cfg.Settings.Skills)
	qopts.OnReport = func(store.Task) {
		t.wantUsage()
		t.skillsMu.Lock()
		on := t.skillsOn
		t.skillsMu.Unlock()
		if !on {
			return
		}
		select {
		case t.scanWanted <- struct{}{}:
		default:
		}
	}
	if t.q, err = queue.New(qopts); err != nil {
		return err
	}
	// Roles sleep, and wait for slots, by what the queue holds for them.
	t.sup.SetWorkCheck(t.q.Work)
	t.desk, err = approvals.New(approvals.Options{Store: t.st, RunID: run.ID, Config: t.Config, TaskOf: t.taskOf, Asked: t.asked,
		Waiting: t.waiting})
	return err
}

// taskOf is the id of the role's task in flight, for an approval's record.
func (t *Team) taskOf(role string) string {
	task, err := t.st.InFlight(role)
	if err != nil || task == nil {
		return ""
	}
	return task.ID
}

// asked tells a person that an action waits for their answer (the
// question notification).
func (t *Team) asked(a store.Approval) {
	t.notifier.Send(notify.Event{Kind: notify.KindQuestion, Role: a.Role, TaskID: a.TaskID, At: a.AskedAt,
		Message: textsafe.Escape(fmt.Sprintf("%s asks to %s: %s (answer: shogun answer %s yes|no --id %d, within the approvals time-out)",
			a.Role, a.Kind, approvals.CutSubject(a.Subject, maxNotifiedSubject), a.Role, a.ID))})
}

// maxNotifiedSubject bounds what a notification quotes of an action;
// shogun questions shows it whole.
const maxNotifiedSubject = 1000

// waiting tells a role which of its hook's questions wait for a person:
// while any do, it is waiting, not idle or stalled.
func (t *Team) waiting(role string, open []store.Approval) {
	r, ok := t.sup.Role(role)
	if !ok {
		return
	}
	lines := make([]string, 0, len(open))
	for _, a := range open {
		lines = append(lines, fmt.Sprintf("question %d: %s %s", a.ID, a.Kind, approvals.CutSubject(a.Subject, maxStatusSubject)))
	}
	r.SetHookQuestions(lines)
}

// maxStatusSubject bounds what the status quotes of a question.
const maxStatusSubject = 200

// setSkills takes the skills settings into use (at start, and at a reload).
func (t *Team) setSkills(s config.SkillsSettings) {
	t.skillsMu.Lock()
	t.skillsOn, t.skills = s.Enabled, skills.OptionsFrom(s)
	t.skills.OnlyChanges = true // the log counts new and reopened candidates only
	t.skillsMu.Unlock()
}

// scanSkills mines the history for skill candidates after reports arrive
// (skills.enabled), at most once per scanEvery, until ctx ends.
func (t *Team) scanSkills(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.scanWanted:
		}
		t.skillsMu.Lock()
		opts := t.skills
		t.skillsMu.Unlock()
		began := time.Now()
		res, err := skills.Scan(t.st, opts)
		if errors.Is(err, skills.ErrRebuilding) {
			t.log.Debug().Err(err).Msg("skills scan")
		} else if err != nil {
			t.log.Warn().Err(err).Msg("skills scan")
		} else if res.New+res.Reopened > 0 {
			t.log.Info().Int("new", res.New).Int("reopened", res.Reopened).Int("tasks", res.Tasks).Msg("skill candidates found; review them with `shogun skills review`")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(scanEvery, scanDuty*time.Since(began))):
		}
	}
}

// scanEvery spaces automatic skills scans: a burst of reports costs one scan.
const scanEvery = 5 * time.Second

// scanDuty: the pause after an automatic scan is at least this many times
// as long as the scan took, so that mining a long history never takes
// more than about a twentieth of a core from the team; candidates are
// reviewed hours later, so a later scan loses nothing.
const scanDuty = 20

// onEvent records a supervisor event in the history and refreshes the
// dashboard. It may run before the queue exists (events at start-up).
func (t *Team) onEvent(e supervisor.Event, observe func(supervisor.Event)) {
	if observe != nil {
		observe(e)
	}
	msg := e.Message
	if e.Kind == supervisor.EventState {
		msg = fmt.Sprintf("%s: %s", e.State, e.Message)
		if e.State == supervisor.Starting {
			t.lastStart.Store(time.Now().UnixNano())
		}
		if !e.State.Running() && t.desk != nil {
			// The hook that asked ended with the program: its questions
			// have nobody to answer.
			t.desk.Withdraw(e.Role, "the role's program ended ("+string(e.State)+") while a person was asked")
		}
		select {
		case t.stateChanged <- struct{}{}:
		default:
		}
		t.notifyState(e)
	}
	if e.Kind == supervisor.EventMemory {
		t.notifier.Send(notify.Event{Kind: notify.KindMemory, Role: e.Role, Message: textsafe.Escape(e.Role + ": " + e.Message + "; restarted, its task delivered again"), At: e.Time})
	}
	if !e.Routine {
		if err := t.st.AddEvent(store.Event{At: e.Time, RunID: t.run.ID, Role: e.Role, Kind: string(e.Kind), Message: msg}); err != nil {
			t.log.Warn().Err(err).Msg("record event")
		}
	}
	if q := t.q; q != nil {
		q.Touch()
	}
}

// Run runs the roles and the queue until ctx ends and every process tree is
// gone, then records how the run ended.
//
// A queue that cannot run (its claimed files cannot be read at start) stops
// the roles too: they would run with nothing handing them work, and Run
// returns why.
func (t *Team) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var qErr error
	supCtx, stopRoles := context.WithCancel(ctx)
	defer stopRoles()
	// The queue stops with ctx, or alone when the history is lost.
	qctx, stopQueue := context.WithCancel(ctx)
	defer stopQueue()
	wg.Add(3)
	if t.keepAwakeOn {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.keepAwake(supCtx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.notifier.Run(supCtx)
	}()
	go func() {
		defer wg.Done()
		if qErr = t.q.Run(qctx); qErr != nil && ctx.Err() == nil {
			qErr = fmt.Errorf("the queue could not run, so the roles were stopped: %w", qErr)
			t.log.Error().Err(qErr).Msg("queue")
			stopRoles()
		}
	}()
	go func() {
		defer wg.Done()
		t.scanSkills(qctx)
	}()
	go func() {
		defer wg.Done()
		t.watchHistory(qctx, t.historyCheck, stopQueue)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.pruneHistory(qctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.watchConfig(qctx, t.configSettle, t.configPoll)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.watchEnforcement(qctx, t.configSettle, t.configPoll)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.readUsage(qctx)
	}()
	// The roles take their slots at start by the work the queue has for
	// them: the commands sent while no supervisor ran count.
	select {
	case <-t.q.TakenIn():
	case <-ctx.Done():
	}
	err := errors.Join(t.sup.Run(supCtx), func() error { stopQueue(); wg.Wait(); return qErr }(), t.Halted())
	// Nobody is left to ask: the open questions are denied, on record.
	t.desk.Close()
	status := store.RunStopped
	if err != nil {
		status = store.RunFailed
	}
	return errors.Join(err, t.st.EndRun(t.run.ID, status, time.Now()))
}

// Supervisor is the team's supervisor.
func (t *Team) Supervisor() *supervisor.Supervisor { return t.sup }

// Queue is the team's file queue.
func (t *Team) Queue() *queue.Queue { return t.q }

// Store is the team's history.
func (t *Team) Store() *store.Store { return t.st }

// Approvals is the desk that decides and records what agents ask to do.
func (t *Team) Approvals() *approvals.Desk { return t.desk }

// RunID is the id of this run in the history.
func (t *Team) RunID() string { return t.run.ID }

// Close releases the history; call it after Run has returned.
func (t *Team) Close() error { return t.st.Close() }

// notifyState tells a person about a role state that needs them: a dialog
// (attention), a role given up on (fatal), a usage limit (limited).
func (t *Team) notifyState(e supervisor.Event) {
	kind := ""
	switch e.State {
	case supervisor.Attention:
		// A permission prompt shogun can read is a question a person
		// answers from anywhere; any other dialog needs them attached.
		if role, ok := t.sup.Role(e.Role); ok {
			if q, ok := role.Question(); ok && q.Kind == questions.Permission {
				t.notifier.Send(notify.Event{Kind: notify.KindQuestion, Role: e.Role, At: e.Time,
					Message: textsafe.Escape(fmt.Sprintf("%s's screen asks: %s %s (answer: shogun answer %s yes|always|no --id %s)", e.Role, q.Prompt,
						approvals.CutSubject(q.Subject, maxNotifiedSubject), e.Role, q.ID))})
				return
			}
		}
		kind = notify.KindAttention
	case supervisor.Fatal:
		kind = notify.KindFatal
	case supervisor.Limited:
		kind = notify.KindLimited
	default:
		return
	}
	t.notifier.Send(notify.Event{Kind: kind, Role: e.Role, Message: textsafe.Escape(e.Message), At: e.Time})
}

// Notify sends an event to the configured hooks (see package notify); the
// queue uses it for task events.
func (t *Team) Notify(e notify.Event) { t.notifier.Send(e) }
