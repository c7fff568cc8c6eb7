package queue

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/textsafe"
)

// ReleaseTasks deals with the open tasks of a role that no longer runs
// because the configuration changed; call it after RemoveAgent, once the
// role's program has stopped. A disabled role's task in flight goes back
// to its queue and waits, with the queued ones, for the role to be enabled
// again (a person may cancel them meanwhile). A role removed from the
// configuration will not come back: each of its open tasks is closed as
// blocked, and its sender is told, as for a blocked report. Either way the
// role's task file goes to the archive, so that no program finds a task
// that is not its own any more.
func (q *Queue) ReleaseTasks(role string, removed bool) error {
	why := fmt.Sprintf("role %s was removed from config/roles.yaml before it reported", role)
	ts, err := q.st.ReleaseRole(role, removed, why, q.now())
	if err != nil {
		return err
	}
	for _, t := range ts {
		if !removed {
			q.log.Info().Str("role", role).Str("task_id", t.ID).Msg("role disabled: its task is back in its queue until it is enabled again")
			q.event(role, "requeued", t.ID, "the role was disabled; the task waits in its queue until the role is enabled again")
			continue
		}
		q.log.Warn().Str("role", role).Str("task_id", t.ID).Msg("role removed: its open task is blocked")
		q.event(role, "blocked", t.ID, why)
		if t.From != "" {
			q.tellSender(t.From, t.ID, fmt.Sprintf("Task %s for %s (%s) is blocked: %s", t.ID, role, typedTitle(t.Title), why))
		}
		q.notify(notify.Event{Kind: notify.KindBlocked, Role: role, TaskID: t.ID, Title: textsafe.Escape(t.Title),
			Message: fmt.Sprintf("task %s for %s is blocked: %s", t.ID, role, why)})
	}
	q.archiveTaskFile(role)
	q.touched()
	return nil
}

// archiveTaskFile moves a role's task file into the archive, named after
// the task the history last gave the role (never after what the file says).
func (q *Queue) archiveTaskFile(role string) {
	path := q.layout.TaskFile(role)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return
	}
	name := "unknown"
	if prev, err := q.st.LastAssigned(role); err == nil && prev != nil && checkID("task_id", prev.ID) == nil {
		name = prev.ID
	}
	if _, err := moveInto(path, q.layout.ArchiveFor("tasks", q.now()), role+"-"+name+".yaml"); err != nil {
		q.log.Warn().Err(err).Str("role", role).Msg("archive the task file of a role that stopped")
	}
}
