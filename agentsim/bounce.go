package agentsim

import (
	"context"
	"fmt"
)

// bouncer is the handler of an agent that hands every task straight back
// (Options.Bounce): it writes a command with the task's title to the role
// the task came from, naming the task as its parent, then works on the task
// as a plain agent and reports. Two such agents keep a chain of commands
// going between them until the supervisor's loop guard stops it.
type bouncer struct {
	d    *delegator
	work simulatedWork
}

func (b bouncer) handle(ctx context.Context, t *task) (report, *handoff, error) {
	if t.From != "" {
		c := command{
			ID:     "bounce-" + t.TaskID,
			To:     t.From,
			From:   b.d.self,
			Title:  t.Title,
			Body:   t.Body,
			Parent: t.TaskID,
		}
		if _, err := b.d.write(fileSafe(fmt.Sprintf("%s-bounce-%s", b.d.self, t.TaskID)), c); err != nil {
			return report{}, nil, fmt.Errorf("hand %q back to %s: %w", t.Title, t.From, err)
		}
	}
	return b.work.handle(ctx, t)
}
