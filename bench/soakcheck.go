package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// slope is the least-squares slope of ys over xs (y per unit of x), and
// false when there are fewer than two distinct xs to fit.
func slope(xs, ys []float64) (float64, bool) {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0, false
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}

// sentCommand is a command the soak sent, by `shogun send` or as a file.
type sentCommand struct {
	ID, Via, To string
	At          time.Time
}

// queueLeftovers is what the queue folders hold at the end, by command id:
// why a command was refused (runtime/queue/failed/), and commands not yet
// taken (runtime/queue/commands/).
type queueLeftovers struct {
	Refused map[string]string
	Waiting map[string]bool
}

// reconciliation accounts for every command of a soak: each one sent must
// have become exactly one task (or have been refused with a reason, or
// still wait in the queue folder), and every task must be closed or have a
// reason to be open.
type reconciliation struct {
	Sent, Tasks, Closed int
	// Lost are sent commands with no task, no refusal and no file left;
	// Doubled are command ids with more than one task.
	Lost, Doubled []string
	// Refused counts refused commands (the soak's and the agents') by why.
	Refused map[string]int
	// Waiting are sent commands still in runtime/queue/commands/.
	Waiting []string
	// Open are the tasks not closed at the end, each with why.
	Open []string
	// Wake-ups: closed tasks with a from role whose "notified" event is
	// missing, or there more than once.
	WakeupsTyped                   int
	WakeupsMissing, WakeupsDoubled []string
}

// reconcile accounts for the commands sent against the history's tasks,
// the times of the notified events per task id, the queue folders'
// leftovers and the roles' last states (for saying why a task is open).
func reconcile(sent []sentCommand, tasks []store.Task, notified map[string][]time.Time, left queueLeftovers, roleState map[string]string) reconciliation {
	rc := reconciliation{Sent: len(sent), Tasks: len(tasks), Refused: map[string]int{}}
	byCommand := map[string][]store.Task{}
	children := map[string][]store.Task{}
	inFlight := map[string]store.Task{}
	for _, t := range tasks {
		byCommand[t.CommandID] = append(byCommand[t.CommandID], t)
		if t.Parent != "" {
			children[t.Parent] = append(children[t.Parent], t)
		}
		if store.InFlightStatus(t.Status) {
			inFlight[t.Role] = t
		}
	}
	for id, ts := range byCommand {
		if len(ts) > 1 {
			rc.Doubled = append(rc.Doubled, fmt.Sprintf("%s: %d tasks", id, len(ts)))
		}
	}
	for _, c := range sent {
		if len(byCommand[c.ID]) > 0 {
			continue
		}
		switch {
		case left.Refused[c.ID] != "":
		case left.Waiting[c.ID]:
			rc.Waiting = append(rc.Waiting, c.ID)
		default:
			rc.Lost = append(rc.Lost, fmt.Sprintf("%s (%s to %s at %s)", c.ID, c.Via, c.To, c.At.UTC().Format("15:04:05")))
		}
	}
	for _, why := range left.Refused {
		rc.Refused[refusalKind(why)]++
	}
	for _, t := range tasks {
		if store.Closed(t.Status) {
			rc.Closed++
			if t.From != "" {
				switch n := len(notified[t.ID]); {
				case n == 0:
					rc.WakeupsMissing = append(rc.WakeupsMissing, fmt.Sprintf("%s (%s → %s)", t.ID, t.Role, t.From))
				case n > 1:
					rc.WakeupsDoubled = append(rc.WakeupsDoubled, fmt.Sprintf("%s (%s → %s, %d times)", t.ID, t.Role, t.From, n))
					rc.WakeupsTyped++
				default:
					rc.WakeupsTyped++
				}
			}
			continue
		}
		why := whyOpen(t, children[t.ID], notified, left, roleState)
		if busy, ok := inFlight[t.Role]; ok && t.Status == store.StatusQueued {
			why = fmt.Sprintf("queued behind %s (%s)", busy.ID, busy.Status)
		}
		rc.Open = append(rc.Open, fmt.Sprintf("%s %s for %s: %s", t.ID, t.Status, t.Role, why))
	}
	sort.Strings(rc.Lost)
	sort.Strings(rc.Doubled)
	sort.Strings(rc.Waiting)
	sort.Strings(rc.Open)
	sort.Strings(rc.WakeupsMissing)
	sort.Strings(rc.WakeupsDoubled)
	return rc
}

// whyOpen says what an open task waits for: its parts (open, refused,
// closed without their sender told, or told only before the task was handed
// out again), else its role.
func whyOpen(t store.Task, parts []store.Task, notified map[string][]time.Time, left queueLeftovers, roleState map[string]string) string {
	var why []string
	for _, p := range parts {
		told := notified[p.ID]
		switch {
		case !store.Closed(p.Status):
			why = append(why, fmt.Sprintf("part %s still %s", p.ID, p.Status))
		case p.From != t.Role:
		case len(told) == 0:
			why = append(why, fmt.Sprintf("part %s %s but %s was never told (lost wake-up)", p.ID, p.Status, t.Role))
		case told[len(told)-1].Before(t.AssignedAt):
			why = append(why, fmt.Sprintf("part %s %s and %s told at %s, before the task was handed out again at %s (attempt %d): nothing tells it again",
				p.ID, p.Status, t.Role, told[len(told)-1].UTC().Format("15:04:05"), t.AssignedAt.UTC().Format("15:04:05"), t.Attempts))
		}
	}
	// The delegating agent names its parts' commands <task id>-<role>.
	var refused []string
	for id, reason := range left.Refused {
		if strings.HasPrefix(id, t.ID+"-") {
			refused = append(refused, fmt.Sprintf("part %s refused (%s)", id, refusalKind(reason)))
		}
	}
	sort.Strings(refused)
	why = append(why, refused...)
	if len(why) > 0 {
		return strings.Join(why, "; ")
	}
	state := roleState[t.Role]
	if state == "" {
		state = "unknown"
	}
	return fmt.Sprintf("role %s is %s (attempts %d)", t.Role, state, t.Attempts)
}

// refusalKind is the gist of a refusal: its message up to the first colon,
// so that refusals group by cause rather than by chain.
func refusalKind(why string) string {
	if k, _, ok := strings.Cut(why, ":"); ok {
		return strings.TrimSpace(k)
	}
	return strings.TrimSpace(why)
}
