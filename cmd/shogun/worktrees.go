package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/textsafe"
)

func worktreesCommand() *cli.Command {
	return &cli.Command{
		Name:  "worktrees",
		Usage: "list the roles' git worktrees: branch, commits ahead of and behind the base, uncommitted files",
		Description: "Roles with worktree: true in config/roles.yaml work in a git worktree of their own,\n" +
			".shogun/worktrees/<role> of the repository holding their cwd, on branch shogun/<role>.\n" +
			"This lists them, and worktrees of roles that are gone (orphans), which prune removes.\n" +
			"See also shogun diff ROLE and shogun merge ROLE.",
		Flags:       []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/json.md)"}},
		Subcommands: []*cli.Command{worktreesPruneCommand()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("unknown argument %q: shogun worktrees [--json] or shogun worktrees prune [--force]", c.Args().First())
			}
			ws, cfg, err := worktreeConfig(c)
			if err != nil {
				return err
			}
			specs, dirs := roleSpecs(ws, cfg)
			sts := gitwork.New().Survey(context.Background(), specs, ws, dirs)
			if c.Bool("json") {
				if sts == nil {
					sts = []gitwork.Status{}
				}
				return printJSON(c.App.Writer, sts)
			}
			return printWorktrees(c.App.Writer, sts)
		},
	}
}

func worktreesPruneCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "remove the worktrees of roles that no longer exist (or no longer ask for one)",
		Description: "A worktree with uncommitted files or with commits not merged into its base is kept\n" +
			"and named, unless --force. A branch is deleted with its worktree only when its base holds\n" +
			"all of it, so even --force never loses a commit.",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "force", Usage: "also remove worktrees with uncommitted or unmerged work"}},
		Action: func(c *cli.Context) error {
			ws, cfg, err := worktreeConfig(c)
			if err != nil {
				return err
			}
			g := gitwork.New()
			ctx := context.Background()
			specs, dirs := roleSpecs(ws, cfg)
			w := c.App.Writer
			var kept []string
			pruned := 0
			for _, st := range g.Survey(ctx, specs, ws, dirs) {
				if !st.Orphan {
					continue
				}
				rm, err := g.Remove(ctx, st, c.Bool("force"))
				if err != nil {
					kept = append(kept, st.Role)
					fmt.Fprintf(w, "kept %s (%s): %s\n", textsafe.Escape(st.Role), textsafe.Escape(st.Path), textsafe.Escape(strings.TrimPrefix(err.Error(), gitwork.ErrUnsaved.Error()+": ")))
					continue
				}
				pruned++
				line := fmt.Sprintf("removed %s (%s)", st.Role, st.Path)
				switch {
				case rm.BranchDeleted:
					line += fmt.Sprintf(" and its branch %s, merged into %s", st.Branch, st.Base)
				case rm.BranchKept != "":
					line += fmt.Sprintf("; branch %s kept: %s", st.Branch, rm.BranchKept)
				}
				fmt.Fprintln(w, textsafe.Escape(line))
			}
			if len(kept) > 0 {
				return fmt.Errorf("%d %s kept because removing them would lose work: %s (merge or commit it, or prune --force)",
					len(kept), plural(len(kept), "worktree", "worktrees"), strings.Join(kept, ", "))
			}
			if pruned == 0 {
				fmt.Fprintln(w, "no worktrees of roles that are gone")
			}
			return nil
		},
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show a role's changes against its base (what shogun merge would take in)",
		ArgsUsage: "ROLE",
		Description: "The commits of the role's branch since it left its base, as git diff prints them.\n" +
			"--uncommitted adds the worktree's uncommitted changes to tracked files. On a terminal,\n" +
			"control characters in the changes are shown escaped.",
		Flags: []cli.Flag{workspaceFlag,
			&cli.BoolFlag{Name: "uncommitted", Usage: "include the worktree's uncommitted changes to tracked files"},
			&cli.BoolFlag{Name: "stat", Usage: "a summary per file instead of the changes"},
		},
		Action: func(c *cli.Context) error {
			g, wt, err := roleWorktree(c, "diff")
			if err != nil {
				return err
			}
			out := c.App.Writer
			if isTerminal(out) {
				esc := &escapingWriter{w: out}
				defer esc.Flush()
				out = esc
			}
			return g.Diff(context.Background(), wt, gitwork.DiffOptions{Uncommitted: c.Bool("uncommitted"), Stat: c.Bool("stat")}, out)
		},
	}
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge a role's branch into its base in the main checkout",
		ArgsUsage: "ROLE",
		Description: "A merge commit (or with --squash one commit holding all the changes) on the base, in\n" +
			"the repository's main checkout, which must be on the base and without uncommitted\n" +
			"changes. A conflict aborts the merge at once, names the files, and leaves the main\n" +
			"checkout as it was. Only commits are merged: uncommitted work in the worktree is named.",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "squash", Usage: "one new commit instead of a merge commit"}},
		Action: func(c *cli.Context) error {
			g, wt, err := roleWorktree(c, "merge")
			if err != nil {
				return err
			}
			res, err := g.Merge(context.Background(), wt, c.Bool("squash"))
			if n := len(res.Uncommitted); n > 0 {
				fmt.Fprintf(c.App.ErrWriter, "shogun: note: %s's worktree has %d uncommitted %s, not part of any merge: %s\n",
					wt.Role, n, plural(n, "file", "files"), textsafe.Escape(strings.Join(res.Uncommitted, ", ")))
			}
			if err != nil {
				return err
			}
			w := c.App.Writer
			switch {
			case res.Commits == 0:
				fmt.Fprintf(w, "nothing to merge: %s has no commits that %s lacks\n", wt.Branch, wt.Base)
			case res.Squash:
				fmt.Fprintf(w, "merged role %s: %d %s of %s into %s as one commit %s, in %s\n", wt.Role, res.Commits,
					plural(res.Commits, "commit", "commits"), wt.Branch, wt.Base, short7(res.Commit), wt.Repo)
			default:
				fmt.Fprintf(w, "merged role %s: %d %s of %s into %s with merge commit %s, in %s\n", wt.Role, res.Commits,
					plural(res.Commits, "commit", "commits"), wt.Branch, wt.Base, short7(res.Commit), wt.Repo)
			}
			return nil
		},
	}
}

// worktreeConfig loads the workspace's configuration for the worktree
// commands.
func worktreeConfig(c *cli.Context) (string, *config.Config, error) {
	ws, err := workspaceDir(c)
	if err != nil {
		return "", nil, err
	}
	cfg, err := loadConfig(ws)
	if err != nil {
		return "", nil, err
	}
	return ws, cfg, nil
}

// roleSpecs are the worktrees the roles ask for (disabled roles included:
// they still exist), and the folders whose repositories may hold orphans:
// every role's cwd and the workspace.
func roleSpecs(ws string, cfg *config.Config) ([]gitwork.Spec, []string) {
	var specs []gitwork.Spec
	dirs := []string{ws}
	for _, r := range cfg.Roles {
		if s, ok := gitwork.SpecOf(r); ok {
			specs = append(specs, s)
		}
		dirs = append(dirs, r.Command.Cwd)
	}
	return specs, dirs
}

// roleWorktree resolves the worktree of the role named by the command's
// one argument.
func roleWorktree(c *cli.Context, verb string) (gitwork.Git, gitwork.Worktree, error) {
	g := gitwork.New()
	if c.NArg() != 1 {
		return g, gitwork.Worktree{}, fmt.Errorf("%s needs one role: shogun %s ROLE (see shogun worktrees)", verb, verb)
	}
	_, cfg, err := worktreeConfig(c)
	if err != nil {
		return g, gitwork.Worktree{}, err
	}
	id := c.Args().First()
	r, ok := cfg.Role(id)
	if !ok {
		return g, gitwork.Worktree{}, fmt.Errorf("no role %q in config/roles.yaml", textsafe.Escape(id))
	}
	s, ok := gitwork.SpecOf(r)
	if !ok {
		return g, gitwork.Worktree{}, fmt.Errorf("role %s has no worktree (add worktree: true to it in config/roles.yaml)", id)
	}
	wt, err := g.Resolve(context.Background(), s)
	return g, wt, err
}

// printWorktrees prints the table of shogun worktrees, then each problem.
func printWorktrees(w io.Writer, sts []gitwork.Status) error {
	if len(sts) == 0 {
		fmt.Fprintln(w, "no role has a worktree (add worktree: true to a role in config/roles.yaml)")
		return nil
	}
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "ROLE\tSTATE\tBRANCH\tBASE\tAHEAD\tBEHIND\tDIRTY\tPATH")
	var problems []string
	for _, s := range sts {
		state := "ready"
		switch {
		case s.Problem != "" && s.Path == "":
			state = "problem"
		case s.Orphan:
			state = "orphan"
		case !s.Exists:
			state = "made at start"
		}
		dirty := "-"
		if n := len(s.DirtyFiles); n > 3 {
			dirty = fmt.Sprintf("%d (%s, …)", n, strings.Join(s.DirtyFiles[:3], ", "))
		} else if n > 0 {
			dirty = fmt.Sprintf("%d (%s)", n, strings.Join(s.DirtyFiles, ", "))
		}
		if s.Problem != "" {
			problems = append(problems, s.Role+": "+s.Problem)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", textsafe.Escape(s.Role), state, textsafe.Escape(orDash(s.Branch)), textsafe.Escape(orDash(s.Base)),
			s.Ahead, s.Behind, textsafe.Escape(dirty), textsafe.Escape(orDash(s.Path)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(w, "problem: "+textsafe.Escape(p))
	}
	return nil
}

func short7(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// isTerminal says whether w is a terminal, where raw control characters
// would be commands rather than text.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// escapingWriter passes text through line by line with every control
// character escaped (textsafe), except the tabs, line ends and CRLF line
// ends that text files are made of: a diff shows what an agent wrote, which
// may hold escape sequences meant for the reader's terminal.
type escapingWriter struct {
	w    io.Writer
	line []byte
	err  error
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		e.line = append(e.line, b)
		if b == '\n' {
			e.flushLine()
		}
	}
	return len(p), e.err
}

// Flush writes what is left after the last line break.
func (e *escapingWriter) Flush() error {
	if len(e.line) > 0 {
		e.flushLine()
	}
	return e.err
}

func (e *escapingWriter) flushLine() {
	s := string(e.line)
	e.line = e.line[:0]
	end := ""
	for _, suffix := range []string{"\r\n", "\n"} {
		if strings.HasSuffix(s, suffix) {
			s, end = strings.TrimSuffix(s, suffix), suffix
			break
		}
	}
	parts := strings.Split(s, "\t")
	for i, p := range parts {
		parts[i] = textsafe.Escape(p)
	}
	if _, err := io.WriteString(e.w, strings.Join(parts, "\t")+end); err != nil && e.err == nil {
		e.err = err
	}
}

var _ io.Writer = (*escapingWriter)(nil)
