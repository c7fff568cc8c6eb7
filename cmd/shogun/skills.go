package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
)

func skillsCommand() *cli.Command {
	return &cli.Command{
		Name:  "skills",
		Usage: "turn repeated work from the history into agent skills: scan, list, review, export",
		Description: "scan finds repeated work among finished tasks and proposes skill candidates; review lets you\n" +
			"approve, reject or edit them; export writes approved ones as Agent Skills Markdown for\n" +
			"Codex, Copilot and Claude.",
		Subcommands: []*cli.Command{skillsScanCommand(), skillsListCommand(), skillsReviewCommand(), skillsExportCommand()},
	}
}

// openHistory loads the workspace's configuration and opens its history,
// which must exist: skills come from tasks the supervisor has recorded.
func openHistory(c *cli.Context) (string, *config.Config, *store.Store, error) {
	ws, err := workspaceDir(c)
	if err != nil {
		return "", nil, nil, err
	}
	cfg, err := loadConfig(ws)
	if err != nil {
		return "", nil, nil, err
	}
	path := cfg.Settings.Data.SQLitePath
	if _, err := os.Stat(path); err != nil {
		return "", nil, nil, fmt.Errorf("no history yet at %s: start the supervisor first (shogun start), or see the loop with shogun demo", path)
	}
	st, err := openStore(c, nil, ws, path)
	if err != nil {
		return "", nil, nil, err
	}
	return ws, cfg, st, nil
}

func skillsScanCommand() *cli.Command {
	return &cli.Command{
		Name:  "scan",
		Usage: "find repeated work among finished tasks and propose skill candidates",
		Description: "Groups finished tasks by role and normalised title, by shared tag, and by near-duplicate\n" +
			"title and body, and takes every skill an agent proposed in a report. Each group becomes or\n" +
			"updates one candidate; a rejected one stays rejected until its group has grown enough.\n" +
			"A scan reads only the tasks that finished or changed since the last one; --full reads them all.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.IntFlag{Name: "threshold", Usage: "fewest tasks that make a group", DefaultText: "skills.auto_candidate_threshold"},
			&cli.Float64Flag{Name: "similarity", Usage: "token similarity from which tasks are near-duplicates, in (0, 1]", DefaultText: "skills.similarity"},
			&cli.Float64Flag{Name: "reopen-growth", Usage: "a rejected candidate comes back when its group has grown this many times", Value: skills.DefaultReopenGrowth},
			&cli.BoolFlag{Name: "full", Usage: "mine the whole history again instead of what changed since the last scan (a rebuild)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			ws, cfg, st, err := openHistory(c)
			if err != nil {
				return err
			}
			defer st.Close()
			opts := skills.OptionsFrom(cfg.Settings.Skills)
			if c.IsSet("threshold") {
				if c.Int("threshold") < 1 {
					return fmt.Errorf("--threshold %d: want 1 or more", c.Int("threshold"))
				}
				opts.Threshold = c.Int("threshold")
			}
			if c.IsSet("similarity") {
				if s := c.Float64("similarity"); s <= 0 || s > 1 {
					return fmt.Errorf("--similarity %v: want a number in (0, 1]", s)
				}
				opts.Similarity = c.Float64("similarity")
			}
			opts.ReopenGrowth = c.Float64("reopen-growth")
			if opts.ReopenGrowth <= 1 {
				return fmt.Errorf("--reopen-growth %v: want more than 1", opts.ReopenGrowth)
			}
			opts.Full = c.Bool("full")
			// A full scan of a long history holds a compact copy of it; the
			// collector is asked to keep the process near that rather than at
			// twice it, the default.
			debug.SetMemoryLimit(scanMemory)
			bar := newProgressBar(c.App.ErrWriter, !c.Bool("quiet"))
			opts.Progress = bar.update
			res, err := skills.Scan(st, opts)
			bar.finish()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if res.Candidates == nil {
					res.Candidates = []skills.ScanCandidate{} // [], not null, when nothing recurs
				}
				return printJSON(c.App.Writer, res)
			}
			printScanResult(c.App.Writer, res, workspaceHint(ws))
			return nil
		},
	}
}

// scanMemory is the soft memory limit of `shogun skills scan`.
const scanMemory = 200 << 20

// printScanResult prints what a scan found and what to do next. hint is
// put after the commands it suggests (a --workspace flag, or ""; see
// workspaceHint). The demo can call it after its own scan.
func printScanResult(w io.Writer, res skills.ScanResult, hint string) {
	plural := "s"
	if len(res.Candidates) == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "Scanned %d finished tasks in %v: %d candidate%s (%d new, %d updated, %d unchanged, %d reopened).\n",
		res.Tasks, res.Duration.Round(time.Millisecond), len(res.Candidates), plural, res.New, res.Updated, res.Unchanged, res.Reopened)
	if len(res.Candidates) == 0 {
		fmt.Fprintln(w, "No repeated work yet: a group needs at least the threshold of similar finished tasks.")
		return
	}
	// What changed first, then the most backed; a long list is cut.
	rows := append([]skills.ScanCandidate(nil), res.Candidates...)
	changed := func(c skills.ScanCandidate) bool { return c.Change != skills.ChangeUnchanged }
	sort.SliceStable(rows, func(i, j int) bool {
		if changed(rows[i]) != changed(rows[j]) {
			return changed(rows[i])
		}
		return rows[i].Tasks > rows[j].Tasks
	})
	const maxRows = 20
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "NAME\tSTATUS\tTASKS\tCHANGE\tFROM")
	pending := 0
	for i, cd := range rows {
		if cd.Status == store.SkillPending {
			pending++
		}
		if i < maxRows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", cd.Name, cd.Status, cd.Tasks, cd.Change, cd.Kind)
		}
	}
	tw.Flush()
	if len(rows) > maxRows {
		fmt.Fprintf(w, "... and %d more (shogun skills list%s shows them all)\n", len(rows)-maxRows, hint)
	}
	if pending > 0 {
		fmt.Fprintf(w, "%d pending: review them with `shogun skills review%s`.\n", pending, hint)
	}
}

// workspaceHint is the --workspace flag to repeat in a suggested command,
// or "" when the workspace is the current folder.
func workspaceHint(ws string) string {
	if wd, err := os.Getwd(); err == nil && sameDir(wd, ws) {
		return ""
	}
	return " --workspace " + quoteArg(ws)
}

func sameDir(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ea == eb
}

func skillsListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list skill candidates with how many tasks back each one",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringFlag{Name: "status", Usage: "only candidates in this state: " + strings.Join(store.SkillStatuses, ", ")},
			&cli.BoolFlag{Name: "json", Usage: "print JSON, with each candidate's body and source task ids"},
		},
		Action: func(c *cli.Context) error {
			status := c.String("status")
			if status != "" && !contains(store.SkillStatuses, status) {
				return fmt.Errorf("--status %q: want one of %s", status, strings.Join(store.SkillStatuses, ", "))
			}
			_, _, st, err := openHistory(c)
			if err != nil {
				return err
			}
			defer st.Close()
			cands, err := st.SkillCandidates(status)
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				return printJSON(w, skills.ListEntries(cands))
			}
			if len(cands) == 0 {
				if status != "" {
					fmt.Fprintf(w, "no %s skill candidates\n", status)
				} else {
					fmt.Fprintln(w, "no skill candidates yet: shogun skills scan looks for repeated work")
				}
				return nil
			}
			tw := newTableWriter(w)
			fmt.Fprintln(tw, "NAME\tSTATUS\tTASKS\tUPDATED\tDESCRIPTION")
			for _, cd := range cands {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", cd.Name, cd.Status, len(cd.SourceTaskIDs),
					cd.UpdatedAt.Local().Format("2006-01-02 15:04"), short(cd.Description, 60))
			}
			return tw.Flush()
		},
	}
}

func skillsReviewCommand() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "walk pending skill candidates in the terminal: approve, reject, edit, skip",
		UsageText: "shogun skills review [--workspace DIR]\nshogun skills review --approve NAME... --reject NAME...",
		Description: "In a terminal, shows each pending candidate (name, description, source tasks, body) and\n" +
			"reads one key: a approve, r reject, e edit in $EDITOR, s skip, q quit.\n" +
			"Without a terminal, decide by name with --approve and --reject (repeatable or comma-separated).",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringSliceFlag{Name: "approve", Usage: "approve the candidate `NAME` (repeatable)"},
			&cli.StringSliceFlag{Name: "reject", Usage: "reject the candidate `NAME` (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			approve, reject := splitList(c.StringSlice("approve")), splitList(c.StringSlice("reject"))
			interactive := len(approve) == 0 && len(reject) == 0
			in := int(os.Stdin.Fd())
			if interactive && !term.IsTerminal(in) {
				return errors.New("shogun skills review needs a terminal to read keys from, and stdin is not one; " +
					"without a terminal decide by name: shogun skills review --approve NAME... --reject NAME...")
			}
			_, _, st, err := openHistory(c)
			if err != nil {
				return err
			}
			defer st.Close()
			w := c.App.Writer
			if !interactive {
				cands, err := skills.Decide(st, approve, reject, time.Now())
				if err != nil {
					return err
				}
				for _, cd := range cands {
					fmt.Fprintf(w, "%s %s\n", cd.Status, cd.Name)
				}
				return nil
			}
			return reviewInTerminal(st, in, w)
		},
	}
}

// reviewInTerminal runs the interactive review with the terminal in raw
// mode, giving it back to the editor while one runs and to the shell at
// the end.
func reviewInTerminal(st *store.Store, in int, w io.Writer) error {
	width := 80
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = cols
		}
	}
	old, err := term.MakeRaw(in)
	if err != nil {
		return fmt.Errorf("review: terminal raw mode: %w", err)
	}
	defer func() { _ = term.Restore(in, old) }()
	r := &skills.Review{
		Store: st, In: os.Stdin, Out: w, Width: width, Color: colorful(w), CRLF: true,
		Edit: func(path string) error {
			if err := term.Restore(in, old); err != nil {
				return err
			}
			cmd := skills.EditorCommand(path, os.Getenv)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			runErr := cmd.Run()
			if _, err := term.MakeRaw(in); err != nil {
				return fmt.Errorf("terminal raw mode: %w", err)
			}
			if runErr != nil {
				return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), runErr)
			}
			return nil
		},
	}
	_, err = r.Run()
	return err
}

func skillsExportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write approved skills as Markdown with front matter for Codex, Copilot and Claude",
		Description: "flat layout (default): <skills.codex_path>/<name>.md and <skills.copilot_path>/<name>.md.\n" +
			"dir layout: <name>/SKILL.md under --out or the CLI's project folder (.codex/skills,\n" +
			".github/skills, .claude/skills). Files already there with the same text are left alone;\n" +
			"a different file in the way is an error and nothing is written.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringSliceFlag{Name: "target", Usage: "codex, copilot, claude or all (repeatable or comma-separated)", Value: cli.NewStringSlice(skills.TargetAll)},
			&cli.StringFlag{Name: "layout", Usage: "flat or dir", Value: skills.LayoutFlat},
			&cli.StringFlag{Name: "out", Usage: "write into `DIR` instead of each target's folder"},
			&cli.StringSliceFlag{Name: "name", Usage: "export only the skill `NAME` (repeatable)"},
			&cli.BoolFlag{Name: "full", Usage: "mine the whole history again instead of what changed since the last scan (a rebuild)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			ws, cfg, st, err := openHistory(c)
			if err != nil {
				return err
			}
			defer st.Close()
			out := c.String("out")
			if out != "" && !filepath.IsAbs(out) {
				// Relative to where the user is, as any path argument.
				if out, err = filepath.Abs(out); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
			}
			res, err := skills.Export(st, skills.ExportOptions{
				Targets: splitList(c.StringSlice("target")), Layout: c.String("layout"), Out: out, Workspace: ws,
				CodexPath: cfg.Settings.Skills.CodexPath, CopilotPath: cfg.Settings.Skills.CopilotPath,
				Names: splitList(c.StringSlice("name")),
			})
			w := c.App.Writer
			if errors.Is(err, skills.ErrNothingToExport) {
				if c.Bool("json") {
					return printJSON(w, skills.ExportResult{Files: []skills.ExportedFile{}})
				}
				fmt.Fprintln(w, "No approved skills to export: approve candidates first with shogun skills review.")
				return nil
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(w, res)
			}
			written, names := 0, map[string]bool{}
			for _, file := range res.Files {
				word := "unchanged"
				if file.Written {
					word, written = "wrote", written+1
				}
				names[file.Name] = true
				fmt.Fprintf(w, "%-9s %s (%s)\n", word, displayPath(ws, file.Path), strings.Join(file.Targets, ", "))
			}
			fmt.Fprintf(w, "Exported %d skill(s): %d file(s) written, %d already up to date.\n", len(names), written, len(res.Files)-written)
			return nil
		},
	}
}

// displayPath shows a path relative to the workspace when it is inside.
func displayPath(ws, p string) string {
	if rel, err := filepath.Rel(ws, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progressMin is the history size from which a scan draws a progress bar:
// below it a scan takes well under a second.
const progressMin = 2000

// progressBar draws a scan's progress on one terminal line of stderr, and
// nothing when stderr is not a terminal or the user asked for quiet.
type progressBar struct {
	w       io.Writer
	enabled bool
	stage   string
	pct     int
	drawn   bool
}

func newProgressBar(w io.Writer, wanted bool) *progressBar {
	f, ok := w.(*os.File)
	return &progressBar{w: w, enabled: wanted && ok && term.IsTerminal(int(f.Fd()))}
}

// update is a skills.ScanOptions.Progress. The bar appears once the
// history is known to be large, and redraws only when the percentage or
// the stage changes.
func (p *progressBar) update(stage string, done, total int) {
	if !p.enabled || total <= 0 {
		return
	}
	if !p.drawn && (stage != "reading" || total < progressMin) {
		p.enabled = false // a small history: no bar at all
		return
	}
	pct := done * 100 / total
	if p.drawn && stage == p.stage && pct == p.pct {
		return
	}
	p.stage, p.pct, p.drawn = stage, pct, true
	const width = 24
	filled := pct * width / 100
	fmt.Fprintf(p.w, "\rskills scan: %-9s [%s%s] %3d%%", stage, strings.Repeat("#", filled), strings.Repeat(".", width-filled), pct)
}

// finish clears the bar's line.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 60))
	}
}
