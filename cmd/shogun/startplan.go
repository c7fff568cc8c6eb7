package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// roleWork is the work waiting for a role before start: tasks queued or
// in flight in the history, and commands in runtime/queue/commands/ that
// start turns into tasks; rank is the highest priority among them (0
// high, 1 normal, 2 low).
type roleWork struct {
	tasks, commands, rank int
}

// pendingWork is the work that start would find for roles, read without
// changing anything: the history read-only (none when it is not there or
// cannot be read: the dry run then names no roles with work rather than
// fail), and each command file as the queue would read it (one that does
// not decode, or names no role of the plan, is left out).
func pendingWork(ws string, cfg *config.Config, roles []config.Role) map[string]roleWork {
	known := map[string]bool{}
	for _, r := range roles {
		known[r.ID] = true
	}
	out := map[string]roleWork{}
	if hist, err := store.QueuedWork(cfg.Settings.Data.SQLitePath); err == nil {
		for role, hw := range hist {
			if known[role] {
				out[role] = roleWork{tasks: hw.Tasks, rank: hw.Rank}
			}
		}
	}
	dir := workspace.New(ws).Commands()
	entries, _ := os.ReadDir(dir) // no folder: no commands
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		cmds, err := readCommandFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, c := range cmds {
			if !known[c.To] {
				continue
			}
			rw, had := out[c.To]
			rank := store.PriorityRank(c.Priority)
			if !had || rank < rw.rank {
				rw.rank = rank
			}
			rw.commands++
			out[c.To] = rw
		}
	}
	return out
}

// slotPlan is which roles would take the slots at start under
// agent.max_running and agent.max_running_per_cli: as the supervisor
// gives them, the roles with work first (by priority; the age the
// supervisor also weighs is left to it), then the first of
// config/roles.yaml. Bounds is empty without a bound.
type slotPlan struct {
	bounds []string
	run    []string
	wait   []string
	// withWork are the roles with work, in the order they take slots.
	withWork []string
	work     map[string]roleWork
}

// planSlots plans the slots of roles, given in config/roles.yaml order,
// with the work pending for them.
func planSlots(a config.AgentSettings, roles []config.Role, work map[string]roleWork) slotPlan {
	p := slotPlan{work: work}
	if a.MaxRunning == 0 && len(a.MaxRunningPerCLI) == 0 {
		return p
	}
	if a.MaxRunning > 0 {
		p.bounds = append(p.bounds, fmt.Sprintf("agent.max_running %d", a.MaxRunning))
	}
	for _, cli := range slices.Sorted(maps.Keys(a.MaxRunningPerCLI)) {
		p.bounds = append(p.bounds, fmt.Sprintf("agent.max_running_per_cli %s: %d", cli, a.MaxRunningPerCLI[cli]))
	}
	ordered := slices.Clone(roles)
	slices.SortStableFunc(ordered, func(x, y config.Role) int {
		wx, hx := work[x.ID]
		wy, hy := work[y.ID]
		switch {
		case hx != hy:
			if hx {
				return -1
			}
			return 1
		case hx:
			return wx.rank - wy.rank
		}
		return 0
	})
	perCLI := map[string]int{}
	for _, r := range ordered {
		if _, ok := work[r.ID]; ok {
			p.withWork = append(p.withWork, r.ID)
		}
		n, bounded := a.MaxRunningPerCLI[r.CLI]
		if (a.MaxRunning > 0 && len(p.run) >= a.MaxRunning) || (bounded && perCLI[r.CLI] >= n) {
			p.wait = append(p.wait, r.ID)
			continue
		}
		p.run = append(p.run, r.ID)
		perCLI[r.CLI]++
	}
	return p
}

// summary is the head line's count of the roles that would start: all of
// them, or, under a bound, how many at once and what the others do.
func (p slotPlan) summary(roles int) string {
	if len(p.bounds) == 0 || len(p.wait) == 0 {
		return fmt.Sprintf("%d role(s) would start", roles)
	}
	s := fmt.Sprintf("%d of %d roles would start (%s); the others sleep until a task comes", len(p.run), roles, strings.Join(p.bounds, ", "))
	if slices.ContainsFunc(p.wait, p.hasWork) {
		return s + " (those with queued work wait for a slot)"
	}
	return s
}

// hasWork reports whether role has work waiting.
func (p slotPlan) hasWork(role string) bool {
	_, ok := p.work[role]
	return ok
}

// line says which roles take the slots at start and which wait, naming
// the roles with queued work; "" without a bound.
func (p slotPlan) line() string {
	if len(p.bounds) == 0 {
		return ""
	}
	line := fmt.Sprintf("\n%s: at start %s take the slots", strings.Join(p.bounds, ", "), strings.Join(p.run, ", "))
	if len(p.withWork) == 0 {
		line += " (no role has queued work)"
	} else {
		named := make([]string, len(p.withWork))
		for i, id := range p.withWork {
			named[i] = id + " (" + p.work[id].String() + ")"
		}
		line += ", the roles with queued work first, by priority: " + strings.Join(named, ", ")
	}
	if len(p.wait) > 0 {
		how := "asleep until a task comes"
		if slices.ContainsFunc(p.wait, p.hasWork) {
			how = "those with queued work wait for a slot, the others sleep until a task comes"
		}
		line += fmt.Sprintf("; then, as slots free: %s (%s)", strings.Join(p.wait, ", "), how)
	}
	return line
}

// String is the work as the plan names it: "2 tasks, 1 command".
func (w roleWork) String() string {
	var parts []string
	if w.tasks > 0 {
		parts = append(parts, fmt.Sprintf("%d %s queued", w.tasks, plural(w.tasks, "task", "tasks")))
	}
	if w.commands > 0 {
		parts = append(parts, fmt.Sprintf("%d %s waiting", w.commands, plural(w.commands, "command", "commands")))
	}
	return strings.Join(parts, ", ")
}
