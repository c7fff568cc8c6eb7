package queue

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// exchangeWindow is the period over which queue.max_exchanges, the rate
// limit, counts the commands between two roles.
const exchangeWindow = 10 * time.Minute

// chainLink is where a command's task sits in a chain of commands: the
// task it continues, the chain's first task, and its hops from there.
type chainLink struct {
	parent, root string
	depth        int
}

// placed is a command with its place in its chain.
type placed struct {
	Command
	link chainLink
}

// pairKey names two roles, in either direction.
func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// placeInChain is the loop guard. A command continues the task named by its
// parent key, or else the open task of its from role (an agent asking
// another while it works on something): its task joins that task's chain,
// one hop deeper. Loops are judged within a chain, one piece of work: a
// command that would hand work from one role to another again where the
// chain above it already did (A → B → A → B: a bounce; a chain that came
// back on itself) is refused, and so is a chain deeper than queue.max_hops.
// Independent work between two roles, however much (a delegating role's
// parts are siblings, not a chain), is no loop: only the rate limit,
// queue.max_exchanges commands between two roles within ten minutes, bounds
// its volume, with its own message. A refusal is a *fieldError naming the
// chain and the key that placed the command in it (parent, or else from),
// so the file goes to failed/ and its sender is told. pairs counts the
// commands between two roles taken earlier in the same batch.
func (q *Queue) placeInChain(c Command, pairs map[[2]string]int) (chainLink, error) {
	var parent *store.Task
	via := "from" // the key that put the command in its chain
	switch {
	case c.Parent != "":
		via = "parent"
		t, err := q.st.Task(c.Parent)
		if errors.Is(err, store.ErrUnknownTask) {
			return chainLink{}, &fieldError{field: "parent", msg: fmt.Sprintf(
				"parent %q is not a task of this workspace (leave parent out to continue the open task of from, or of no task)", c.Parent)}
		}
		if err != nil {
			return chainLink{}, err
		}
		parent = &t
	case c.From != "":
		t, err := q.st.InFlight(c.From)
		if err != nil {
			return chainLink{}, err
		}
		parent = t
	}
	var link chainLink
	if parent != nil {
		link = chainLink{parent: parent.ID, root: parent.Root, depth: parent.Depth + 1}
		if link.root == "" {
			link.root = parent.ID
		}
	}
	limits := q.config().Settings.Queue
	if again := q.handedBefore(parent, c.From, c.To, max(limits.MaxHops, 8)); again != nil {
		return chainLink{}, &fieldError{field: via, msg: fmt.Sprintf(
			"loop guard: this command would hand work from %s to %s again within one chain, which already did at %s: %s; agents may be handing work back and forth. If the work is wanted, send it again with `shogun send`",
			c.From, c.To, again.ID, q.chainText(parent, max(limits.MaxHops, 8)))}
	}
	if limits.MaxHops > 0 && link.depth > limits.MaxHops {
		return chainLink{}, &fieldError{field: via, msg: fmt.Sprintf(
			"loop guard: this command to %s would be hop %d of the chain %s, over queue.max_hops (%d); agents may be handing work back and forth. If the work is wanted, send it again with `shogun send`",
			c.To, link.depth, q.chainText(parent, limits.MaxHops), limits.MaxHops)}
	}
	if c.From != "" && limits.MaxExchanges > 0 {
		key := pairKey(c.From, c.To)
		n, err := q.st.Exchanges(c.From, c.To, q.now().Add(-exchangeWindow))
		if err != nil {
			return chainLink{}, err
		}
		if n+pairs[key] >= limits.MaxExchanges {
			chain := ""
			if parent != nil {
				chain = " (chain " + q.chainText(parent, limits.MaxHops) + ")"
			}
			return chainLink{}, &fieldError{field: "from", msg: fmt.Sprintf(
				"rate limit: %d commands between %s and %s within %v already, queue.max_exchanges is %d%s; this counts all their commands, loop or not. If the work is wanted, send it again later or with `shogun send`",
				n+pairs[key], c.From, c.To, exchangeWindow, limits.MaxExchanges, chain)}
		}
		pairs[key]++
	}
	return link, nil
}

// handedBefore is the task of t's chain, t or above it, that from sent to
// to: the hand-off a command from from to to would repeat; nil when there
// is none, when from is no role (a person continues a chain as they like),
// or past limit tasks up the chain.
func (q *Queue) handedBefore(t *store.Task, from, to string, limit int) *store.Task {
	if from == "" {
		return nil
	}
	for cur, n := t, 0; cur != nil && n <= limit; n++ {
		if cur.From == from && cur.Role == to {
			return cur
		}
		if cur.Parent == "" {
			return nil
		}
		next, err := q.st.Task(cur.Parent)
		if err != nil {
			return nil
		}
		cur = &next
	}
	return nil
}

// chainText names a chain from its root down to t: "t-1 (karo) → t-2
// (ashigaru1)", at most limit+1 tasks, the oldest left out first.
func (q *Queue) chainText(t *store.Task, limit int) string {
	var links []string
	for cur := t; cur != nil && len(links) <= limit; {
		links = append(links, fmt.Sprintf("%s (%s)", cur.ID, cur.Role))
		if cur.Parent == "" {
			break
		}
		next, err := q.st.Task(cur.Parent)
		if err != nil {
			links = append(links, "…")
			break
		}
		cur = &next
	}
	for i, j := 0, len(links)-1; i < j; i, j = i+1, j-1 {
		links[i], links[j] = links[j], links[i]
	}
	return strings.Join(links, " → ")
}
