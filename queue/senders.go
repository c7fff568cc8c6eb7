package queue

import (
	"errors"
	"fmt"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

// What a role that sent work is told: the wake-up when its task closes
// (recorded in the history with the close, so that it survives a restart),
// the same again when it sends a closed task's command once more, and why
// a command of its was refused.

// notifySender queues the task's wake-up, the notify line for the role that
// sent the command. The history has it as due (AcceptReport): a sender not
// running now gets it when its worker starts (loadWakeups).
func (q *Queue) notifySender(task store.Task, reportPath string) {
	w, running := q.worker(task.From)
	if !running {
		q.event(task.From, "notify-skipped", task.ID, "sender is not running; told when it is")
		return
	}
	if text, ok := q.wakeupText(task, reportPath); ok {
		w.addNote(note{taskID: task.ID, text: text, wakeup: true})
	}
}

// wakeupText is the notify line of the task's sender about its report.
func (q *Queue) wakeupText(task store.Task, reportPath string) (string, bool) {
	from, ok := q.config().Role(task.From)
	if !ok {
		return "", false
	}
	// Titles were checked on the way in; escaping them again keeps a
	// history written by an older shogun from typing controls. The report
	// path is shogun's (reportArchiveName), never the agent's file name.
	vars := from.TemplateVars(q.layout)
	vars[roles.VarRole] = task.Role
	vars[roles.VarTitle] = typedTitle(task.Title)
	vars[roles.VarReportPath] = textsafe.Escape(workspace.RelTo(from.Command.Cwd, reportPath))
	return roles.Expand(from.Notify, vars), true
}

// loadWakeups queues the wake-ups the history has as due for w's role and
// not yet typed: those of a run that ended before typing them, and those
// of reports read while the role was not running.
func (q *Queue) loadWakeups(w *worker) {
	due, err := q.st.PendingWakeups(w.a.ID())
	if err != nil {
		q.log.Warn().Err(err).Str("role", w.a.ID()).Msg("load wake-ups; they are loaded again when the role restarts")
		return
	}
	for _, wk := range due {
		task, err := q.st.Task(wk.TaskID)
		if err != nil {
			q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", wk.TaskID).Msg("wake-up for a task not in the history")
			continue
		}
		if text, ok := q.wakeupText(task, task.ReportPath); ok {
			w.addNote(note{taskID: task.ID, text: text, wakeup: true})
		}
	}
}

// answerDuplicate answers a command sent again whose task is already
// closed: its sender (a role that lost the first answer with its
// conversation, after a restart say) is told the task's result again, its
// wake-up made due once more, rather than left waiting for a task that
// will never run again. It returns what the duplicate's event says.
func (q *Queue) answerDuplicate(rec store.CommandRecord) string {
	task, err := q.st.TaskForCommand(rec.ID)
	if err != nil || task == nil || !store.Closed(task.Status) {
		return ""
	}
	if rec.From == "" || rec.From != task.From {
		return fmt.Sprintf("; its task %s is %s", task.ID, task.Status)
	}
	again, err := q.st.RearmWakeup(task.ID, q.now())
	if err != nil || !again {
		if err != nil {
			q.log.Warn().Err(err).Str("task_id", task.ID).Msg("answer a duplicate command")
		}
		return fmt.Sprintf("; its task %s is %s", task.ID, task.Status)
	}
	if w, ok := q.worker(task.From); ok {
		if text, ok := q.wakeupText(*task, task.ReportPath); ok {
			w.addNote(note{taskID: task.ID, text: text, wakeup: true})
		}
	}
	return fmt.Sprintf("; its task %s is %s, and %s is told its report again", task.ID, task.Status, task.From)
}

// tellRefused types to the role that sent a refused command why it was
// refused, as a report would be: an agent that only wrote a file would
// otherwise wait for an answer that never comes, and send it again. The
// line names the command by its title and target, both checked on the
// way in, never by the file's name, which its writer chose freely.
func (q *Queue) tellRefused(cmd Command, cause error) {
	if _, ok := q.config().Role(cmd.From); !ok {
		return
	}
	reason := cause.Error()
	var fe *FormatError
	if errors.As(cause, &fe) {
		reason = fe.Message
	}
	q.tellSender(cmd.From, "", fmt.Sprintf("Your command to %s '%s' was refused, not queued: %s (see runtime/queue/failed/)",
		cmd.To, typedTitle(cmd.Title), textsafe.Escape(reason)))
}
