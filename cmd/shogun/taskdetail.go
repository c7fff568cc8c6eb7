package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// printTaskDetail prints one task in full (`shogun tasks TASK`): every
// field the table cuts short or leaves out, the commit its role had
// checked out when it reported, and its body. With asJSON, the task's
// object as `tasks --json` prints each.
func printTaskDetail(w io.Writer, st *store.Store, id string, asJSON bool) error {
	t, err := st.Task(id)
	if errors.Is(err, store.ErrUnknownTask) {
		// The id `shogun send` printed: the command's, whose task this is.
		if byCmd, cerr := st.TaskForCommand(id); cerr == nil && byCmd != nil {
			t, err = *byCmd, nil
		}
	}
	if errors.Is(err, store.ErrUnknownTask) {
		return fmt.Errorf("no task %s in the history, nor a task made from a command of that id (see shogun tasks)", textsafe.Escape(id))
	}
	if err != nil {
		return err
	}
	hs, err := st.Handovers([]string{t.ID})
	if err != nil {
		return err
	}
	if asJSON {
		tokens, err := st.TaskTokens([]string{t.ID})
		if err != nil {
			return err
		}
		out := []control.Task{control.TaskFrom(t)}
		control.WithTokens(out, tokens)
		control.WithHandovers(out, hs)
		return printJSON(w, out[0])
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	tw := newTableWriter(w)
	for _, row := range [][2]string{
		{"task", t.ID},
		{"command", t.CommandID},
		{"role", t.Role},
		{"status", t.Status},
		{"title", t.Title},
		{"from", orDash(t.From)},
		{"priority", t.Priority},
		{"tags", orDash(strings.Join(t.Tags, ", "))},
		{"chain", chainOf(t)},
		{"created", at(t.CreatedAt)},
		{"assigned", at(t.AssignedAt)},
		{"delivered", at(t.DeliveredAt)},
		{"finished", at(t.FinishedAt)},
		{"attempts", fmt.Sprintf("%d (%d submits)", t.Attempts, t.Submits)},
		{"summary", orDash(t.Summary)},
		{"report", orDash(t.ReportPath)},
		{"head commit", orDash(t.HeadCommit)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], textsafe.Escape(row[1]))
	}
	for _, h := range hs[t.ID] {
		fmt.Fprintf(tw, "handed over\t%s\n", textsafe.Escape(fmt.Sprintf("%s from %s to %s: %s", at(h.At), h.From, h.To, h.Reason)))
	}
	// The account changes of its role while the task was its (a move
	// before it was typed, at accounts_switch_at; a move at a usage limit,
	// after which it was typed again) and every other delivery again.
	evs, err := st.EventsForTask(t.ID)
	if err != nil {
		return err
	}
	for _, e := range evs {
		switch e.Kind {
		case "account":
			fmt.Fprintf(tw, "account\t%s\n", textsafe.Escape(at(e.At)+" "+e.Message))
		case "redeliver":
			fmt.Fprintf(tw, "delivered again\t%s\n", textsafe.Escape(at(e.At)+" "+e.Message))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nbody:")
	for _, line := range strings.Split(strings.TrimRight(t.Body, "\n"), "\n") {
		fmt.Fprintln(w, "  "+textsafe.Escape(line))
	}
	return nil
}

// chainOf places a task in its chain of commands.
func chainOf(t store.Task) string {
	if t.Parent == "" {
		return "-"
	}
	return fmt.Sprintf("%s → this task (depth %d, root %s)", t.Parent, t.Depth, t.Root)
}
