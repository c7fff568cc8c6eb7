package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// soakOptions are the soak's lengths, set by the -soak-* flags.
type soakOptions struct {
	For       time.Duration // commands are sent for this long
	KillEvery time.Duration // the supervisor is killed with SIGKILL this often
	Sample    time.Duration // the supervisor is measured this often
	Drain     time.Duration // after the last command, open tasks get this long
	Clients   int           // event-stream clients kept attached
	Keep      bool          // keep the workspace and say where
}

// soakTeam is the team: a karo handing each task to two ashigaru, and four
// ashigaru that each misbehave one way. Each agent records what it received
// in soak-records/ROLE.jsonl.
var soakTeam = []struct{ id, args, extra string }{
	{"karo", `"--delegate", "ashigaru1,ashigaru3"`, ""},
	{"ashigaru1", `"--crash-after", "2m"`, ""},
	{"ashigaru2", `"--dialog-after", "20s"`, "    attention_pattern: \"Do you want to proceed\"\n"},
	{"ashigaru3", `"--work-time", "20s"`, ""},
	{"ashigaru4", `"--flood", "30000"`, ""},
}

func soakRoles(records string) string {
	var b strings.Builder
	b.WriteString("roles:\n")
	for _, r := range soakTeam {
		prompt := map[bool]string{true: "karo", false: "ashigaru"}[r.id == "karo"]
		fmt.Fprintf(&b, `  - id: %s
    prompt_path: roles/%s.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", %s, "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
    stop: {keys: "/exit\r", timeout: 5s}
%s`, r.id, prompt, r.args, filepath.Join(records, r.id+".jsonl"), r.extra)
	}
	return b.String()
}

// soakTargets are whom commands go to: the karo half the time.
var soakTargets = []string{"karo", "karo", "karo", "karo", "ashigaru1", "ashigaru2", "ashigaru3", "ashigaru4"}

// sample is one measurement of the supervisor.
type sample struct {
	At                 time.Time
	RSS                float64 // MiB
	FDs, Threads, Tree int
	Data, Logs         float64 // MiB
	Load               float64 // the machine's 1-minute load average; 0 where unknown
}

// lifetime is one supervisor process, from `shogun start` to kill -9 or stop.
type lifetime struct {
	Pid     int
	Began   time.Time
	Ended   time.Time
	Ready   time.Duration // until no role was starting; 0: not seen
	Samples []sample
	Orphans int // the team's processes still there 3 s after the supervisor was killed
}

// soak is one run of the soak: its workspace, what it sent, what it saw.
type soak struct {
	shogun, ws string
	o          soakOptions

	mu        sync.Mutex
	sent      []sentCommand
	sendFails []string
	answers   int      // dialogs the soak answered
	answerErr []string // answers that failed
	lives     []*lifetime
	cmd       *exec.Cmd
	// statusTook are the times `GET /v1/status` took at each sample.
	statusTook []time.Duration
	// eventKinds counts the history's events by kind, at the end.
	eventKinds map[string]int

	events, streams atomic.Int64 // event-stream events read, streams opened
}

// measureSoak runs the soak and adds its section to the report. It returns
// an error when a command was lost or doubled, after the section is added.
func measureSoak(r *report, shogun string, o soakOptions) (verdict error, err error) {
	ws, err := os.MkdirTemp("", "shogun-soak-")
	if err != nil {
		return nil, err
	}
	if o.Keep {
		fmt.Fprintf(os.Stderr, "bench: soak: workspace %s (kept)\n", ws)
	} else {
		defer os.RemoveAll(ws)
	}
	if out, err := exec.Command(shogun, "init", "--demo", ws).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("init: %v: %s", err, out)
	}
	rec := filepath.Join(ws, "soak-records")
	if err := os.MkdirAll(rec, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(soakRoles(rec)), 0o644); err != nil {
		return nil, err
	}
	s := &soak{shogun: shogun, ws: ws, o: o}
	began := time.Now()
	if err := s.start(); err != nil {
		return nil, err
	}
	defer s.end() // after an error; a no-op after stop
	ctx, cancel := context.WithCancel(context.Background())
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	run := func(ctx context.Context, f func(context.Context)) { wg.Add(1); go func() { defer wg.Done(); f(ctx) }() }
	run(sendCtx, s.sendCommands)
	run(ctx, s.answerDialogs)
	for i := 0; i < o.Clients; i++ {
		run(ctx, s.followEvents)
	}
	tick := time.NewTicker(o.Sample)
	defer tick.Stop()
	nextKill := began.Add(o.KillEvery)
	for time.Since(began) < o.For {
		<-tick.C
		s.measure()
		if time.Now().After(nextKill) && time.Until(began.Add(o.For)) > o.Sample {
			fmt.Fprintf(os.Stderr, "bench: soak: kill -9 of the supervisor after %s\n", time.Since(began).Round(time.Second))
			if err := s.kill(); err != nil {
				return nil, err
			}
			if err := s.start(); err != nil {
				return nil, err
			}
			nextKill = time.Now().Add(o.KillEvery)
		}
	}
	stopSending()
	drainBegan := time.Now()
	for s.openTasks() != 0 && time.Since(drainBegan) < o.Drain {
		<-tick.C
		s.measure()
	}
	drainTook := time.Since(drainBegan)
	states := s.roleStates()
	cancel()
	wg.Wait()
	left, err := s.stop()
	if err != nil {
		return nil, err
	}
	rc, err := s.reconcile(states)
	if err != nil {
		return nil, err
	}
	r.add("Soak: kill -9 cycles under load", s.section(began, drainTook, left, rc))
	if len(rc.Lost) > 0 || len(rc.Doubled) > 0 {
		verdict = fmt.Errorf("soak: %d commands lost, %d doubled", len(rc.Lost), len(rc.Doubled))
	}
	return verdict, nil
}

// start runs `shogun start` and waits until its API answers.
func (s *soak) start() error {
	cmd := exec.Command(s.shogun, "--quiet", "start", "--workspace", s.ws)
	log, err := os.OpenFile(filepath.Join(s.ws, "soak-start.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	life := &lifetime{Pid: cmd.Process.Pid, Began: time.Now()}
	s.mu.Lock()
	s.cmd = cmd
	s.lives = append(s.lives, life)
	s.mu.Unlock()
	c := control.NewClient(s.ws)
	for deadline := time.Now().Add(60 * time.Second); ; {
		if _, err := c.Status(); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("supervisor %d did not answer within 60 s (soak-start.log in %s)", life.Pid, s.ws)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kill ends the supervisor with SIGKILL, as a crash or the OOM killer
// would, and counts the team's processes left behind 3 s later.
func (s *soak) kill() error {
	s.mu.Lock()
	cmd, life := s.cmd, s.lives[len(s.lives)-1]
	s.mu.Unlock()
	if err := cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill -9 supervisor: %w", err)
	}
	_ = cmd.Wait()
	life.Ended = time.Now()
	time.Sleep(3 * time.Second)
	life.Orphans = len(teamProcesses(s.ws))
	return nil
}

// stop ends the last supervisor with `shogun stop` and returns how many of
// the team's processes are left 3 s after it exited.
func (s *soak) stop() (int, error) {
	if out, err := exec.Command(s.shogun, "stop", "--workspace", s.ws).CombinedOutput(); err != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		fmt.Fprintf(os.Stderr, "bench: soak: shogun stop: %v: %s\n", err, out)
	}
	_ = s.cmd.Wait()
	s.lives[len(s.lives)-1].Ended = time.Now()
	time.Sleep(3 * time.Second)
	return len(teamProcesses(s.ws)), nil
}

// end stops a supervisor the soak left running after an error.
func (s *soak) end() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
	}
}

// sendCommands sends a command every 2–5 s, alternately with `shogun send`
// and as a file dropped into runtime/queue/commands/.
func (s *soak) sendCommands(ctx context.Context) {
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2*time.Second + rand.N(3*time.Second)):
		}
		c := sentCommand{ID: fmt.Sprintf("soak-%05d", i), To: soakTargets[rand.N(len(soakTargets))], At: time.Now()}
		var err error
		if i%2 == 0 {
			c.Via = "send"
			var out []byte
			out, err = exec.Command(s.shogun, "send", "--workspace", s.ws, "--id", c.ID, "--to", c.To,
				"--title", "soak job "+strconv.Itoa(i), "--body", "soak").CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
			}
		} else {
			c.Via = "file"
			err = dropSoakCommand(s.ws, c)
		}
		s.mu.Lock()
		s.sent = append(s.sent, c)
		if err != nil {
			s.sendFails = append(s.sendFails, c.ID+": "+err.Error())
		}
		s.mu.Unlock()
	}
}

func dropSoakCommand(ws string, c sentCommand) error {
	dir := workspace.New(ws).Commands()
	tmp := filepath.Join(dir, "."+c.ID+".tmp")
	body := fmt.Sprintf("id: %s\nto: %s\ntitle: soak job %s\nbody: soak\n", c.ID, c.To, c.ID)
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, c.ID+".yaml"))
}

// answerDialogs answers every dialog on a role's screen, as the person
// watching the team would, within a few seconds.
func (s *soak) answerDialogs(ctx context.Context) {
	c := control.NewClient(s.ws)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		qs, err := c.Questions()
		if err != nil {
			continue
		}
		for _, q := range qs.Questions {
			if q.Source != "screen" || q.Kind != "permission" {
				continue
			}
			_, err := c.AnswerRole(q.Role, control.AnswerRequest{Decision: "allow", Kind: q.Kind, Via: "api"})
			s.mu.Lock()
			if err != nil {
				s.answerErr = append(s.answerErr, err.Error())
			} else {
				s.answers++
			}
			s.mu.Unlock()
		}
	}
}

// followEvents keeps one client on the event stream, reconnecting after
// each restart of the supervisor, and counts what it reads.
func (s *soak) followEvents(ctx context.Context) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", control.Endpoint(s.ws))
	}}}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://shogun/v1/events/stream", nil)
		if resp, err := hc.Do(req); err == nil {
			s.streams.Add(1)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "event:") {
					s.events.Add(1)
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// measure samples the running supervisor, and notes when its roles were
// first all past starting.
func (s *soak) measure() {
	s.mu.Lock()
	life := s.lives[len(s.lives)-1]
	s.mu.Unlock()
	pid := life.Pid
	rss, _, err := memory(pid)
	if err != nil {
		return
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	sm := sample{At: time.Now(), RSS: float64(rss) / 1024, FDs: len(fds), Threads: threads(pid), Tree: len(descendants(pid)),
		Data: dirMiB(filepath.Join(s.ws, "data")), Logs: dirMiB(workspace.New(s.ws).Logs()), Load: loadNow()}
	life.Samples = append(life.Samples, sm)
	t0 := time.Now()
	st, err := control.NewClient(s.ws).Status()
	if err != nil {
		return
	}
	s.statusTook = append(s.statusTook, time.Since(t0))
	starting := false
	for _, r := range st.Roles {
		starting = starting || r.State == "starting"
	}
	if !starting && life.Ready == 0 {
		life.Ready = time.Since(life.Began)
	}
}

// loadNow is the machine's 1-minute load average, for reading a soak's
// figures on a shared machine; 0 where it is not known.
func loadNow() float64 {
	f, _ := strconv.ParseFloat(loadAverage(), 64)
	return f
}

// openTasks is how many tasks the running supervisor counts as open; -1
// when it does not answer.
func (s *soak) openTasks() int {
	st, err := control.NewClient(s.ws).Status()
	if err != nil {
		return -1
	}
	open := 0
	for k, n := range st.Tasks {
		if !store.Closed(k) {
			open += n
		}
	}
	return open
}

// roleStates are the roles' states at the end, for saying why a task is open.
func (s *soak) roleStates() map[string]string {
	out := map[string]string{}
	if st, err := control.NewClient(s.ws).Status(); err == nil {
		for _, r := range st.Roles {
			out[r.ID] = r.State
			if r.LastError != "" {
				out[r.ID] += " (" + r.LastError + ")"
			}
		}
	}
	return out
}

var commandID = regexp.MustCompile(`(?m)^id:\s*"?([^"\s]+)`)

// reconcile reads the history and the queue folders once the supervisor has
// stopped, and accounts for every command.
func (s *soak) reconcile(states map[string]string) (reconciliation, error) {
	st, err := store.Open(workspace.New(s.ws).Database())
	if err != nil {
		return reconciliation{}, err
	}
	defer st.Close()
	tasks, err := st.Tasks(store.TaskFilter{})
	if err != nil {
		return reconciliation{}, err
	}
	evs, err := st.Events(0)
	if err != nil {
		return reconciliation{}, err
	}
	s.eventKinds = map[string]int{}
	for _, e := range evs {
		s.eventKinds[e.Kind]++
	}
	notified := map[string][]time.Time{}
	for _, t := range tasks {
		evs, err := st.EventsForTask(t.ID)
		if err != nil {
			return reconciliation{}, err
		}
		for _, e := range evs {
			if e.Kind == "notified" {
				notified[t.ID] = append(notified[t.ID], e.At)
			}
		}
	}
	left := queueLeftovers{Refused: map[string]string{}, Waiting: map[string]bool{}}
	l := workspace.New(s.ws)
	failed, _ := os.ReadDir(l.Failed())
	for _, e := range failed {
		name := e.Name()
		if strings.HasSuffix(name, ".error.yaml") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(l.Failed(), name))
		rec, err := queue.ReadFailure(filepath.Join(l.Failed(), name+".error.yaml"))
		if m := commandID.FindSubmatch(b); m != nil && err == nil {
			left.Refused[string(m[1])] = rec.Error
		}
	}
	waiting, _ := os.ReadDir(l.Commands())
	for _, e := range waiting {
		if b, err := os.ReadFile(filepath.Join(l.Commands(), e.Name())); err == nil {
			if m := commandID.FindSubmatch(b); m != nil {
				left.Waiting[string(m[1])] = true
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return reconcile(s.sent, tasks, notified, left, states), nil
}

// teamProcesses are the live processes started for the workspace: those
// whose environment names it (the supervisor sets SHOGUN_WORKSPACE for its
// roles).
func teamProcesses(ws string) []int {
	want := []byte("SHOGUN_WORKSPACE=" + ws + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && strings.Contains(string(env), string(want)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// descendants are the processes under pid, children and theirs.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// threads is the Threads line of /proc/pid/status.
func threads(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// dirMiB is the size of the files under dir.
func dirMiB(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return float64(n) / (1 << 20)
}
