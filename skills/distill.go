package skills

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// sampleSize bounds the tasks a candidate's text is distilled from: the
// latest ones of its group. Fifty show what recurs; more only cost time.
const sampleSize = 50

// Limits on each section of a distilled body, so it stays readable.
const (
	maxSteps    = 10
	maxFiles    = 12
	maxPitfalls = 8
	maxSources  = 20
	maxExamples = 3
)

// textVersion is the version of the text distill writes: bump it when the
// text changes, so that stored texts are written again.
const textVersion = 2 // 2: name, heading and typical request from one title; readable names for any script

// stask is a sample task, prepared for distilling.
type stask struct {
	store.FinishedTask
	norm      string   // normalised title
	titleToks []string // folded title tokens, without repeats
	set       []uint64 // title and body tokens (orders), as mining compares them

	// Cut by cut when first needed.
	cutDone                bool
	titleIDs               []int32
	bodyFrags, detailFrags []fragment
	filePaths              []string
}

func newSTask(t store.FinishedTask, set []uint64) *stask {
	tt := tokens(t.Title)
	return &stask{FinishedTask: t, norm: strings.Join(tt, " "), titleToks: uniqueStrings(tt), set: set}
}

// distillInput is a settled group as distill reads it: what it is, what
// is known of all its members, and the latest of them (sample).
type distillInput struct {
	kind, key                        string
	role, tag, proposed, proposedDoc string
	stats                            groupStats
	tasks                            []*stask // the sample, in arrival order
}

// distill writes a candidate from its group, by counting, never by
// asking a model: the goal from the most typical task, the steps and file
// paths that recur across the tasks' bodies and reports, the pitfalls from
// failed and blocked reports and from warnings in any report, and the
// source tasks. The same group always gives the same text.
func distill(in *distillInput) content {
	tasks := in.tasks
	rep := representative(tasks)
	examples := exampleTitles(tasks)
	// The typical request's title is the first example too: the
	// description and the body quote the request the name comes from.
	if i := slices.Index(examples, oneLine(rep.Title)); i > 0 {
		examples = slices.Insert(slices.Delete(examples, i, i+1), 0, oneLine(rep.Title))
	}
	d := &distiller{in: in, dict: newTokDict(), tasks: tasks, rep: rep, examples: examples, minCount: max(2, (len(tasks)+4)/5)}
	name, heading := d.nameAndHeading()
	c := content{name: name, heading: heading, description: d.describe(heading), body: d.body(heading)}
	c.bodyHash = textHash(c.body)
	return c
}

// sample is the part of a group its text is distilled from: its latest
// tasks.
func sample(members []int64) []int64 {
	if len(members) > sampleSize {
		return members[len(members)-sampleSize:]
	}
	return members
}

type distiller struct {
	in       *distillInput
	dict     *tokDict
	tasks    []*stask // the sample, in arrival order
	rep      *stask
	examples []string
	minCount int // tasks a step or file must appear in to count as recurring
}

// representative is the sample's most typical task: of those with its
// most common title (as written), the one whose tokens are most shared
// with the others (the earliest on a tie). The candidate's name, heading
// and typical request all come from it, so that they agree.
func representative(tasks []*stask) *stask {
	count := map[uint64]int{}
	titles := map[string]int{}
	most := 0
	for _, t := range tasks {
		for _, tok := range t.set {
			count[tok]++
		}
		title := oneLine(t.Title)
		titles[title]++
		most = max(most, titles[title])
	}
	best, bestScore := (*stask)(nil), -1.0
	for _, t := range tasks {
		if titles[oneLine(t.Title)] != most {
			continue
		}
		if best == nil {
			best = t
		}
		if len(t.set) == 0 {
			continue
		}
		s := 0
		for _, tok := range t.set {
			s += count[tok]
		}
		if score := float64(s) / float64(len(t.set)); score > bestScore {
			best, bestScore = t, score
		}
	}
	return best
}

// exampleTitles are the sample's distinct titles, most frequent first,
// then latest first.
func exampleTitles(tasks []*stask) []string {
	count := map[string]int{}
	last := map[string]int{}
	for i, t := range tasks {
		title := oneLine(t.Title)
		count[title]++
		last[title] = i
	}
	out := make([]string, 0, len(count))
	for title := range count {
		out = append(out, title)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if count[a] != count[b] {
			return count[a] > count[b]
		}
		if last[a] != last[b] {
			return last[a] > last[b]
		}
		return a < b
	})
	return out
}

// nameAndHeading are the name the candidate wants and the heading of its
// body: an agent's proposed name, the tag, or the phrase the sample's
// titles share, cut from the typical request's title. A name none of those
// can spell (a Japanese title, say) comes from the words it can spell
// (fallbackName), never a hash while there is a role.
func (d *distiller) nameAndHeading() (name, heading string) {
	switch d.in.kind {
	case KindProposed:
		name = Slug(d.in.proposed)
		h := d.in.proposed
		if !strings.ContainsRune(h, ' ') {
			h = strings.NewReplacer("-", " ", "_", " ").Replace(h)
		}
		heading = upperFirst(clip(oneLine(h), 80))
	case KindTag:
		name = Slug(d.in.tag)
		heading = upperFirst(d.in.tag) + " tasks"
	default:
		common := d.commonTitleTokens()
		heading = upperFirst(clip(titlePhrase(d.headingTitle(), common), 80))
		name = nameFrom(heading)
	}
	if name == "" {
		name = d.fallbackName()
	}
	if name == "" {
		name = "skill-" + shortHash(d.in.key)
	}
	if heading == "" {
		heading = name
	}
	return name, heading
}

// headingTitle is the title a heading is cut from: the typical request's,
// which is the sample's most frequent wording (representative).
func (d *distiller) headingTitle() string { return oneLine(d.rep.Title) }

// fallbackName names a candidate whose heading has no word a name can
// spell: the words of the typical request's title that it can ("READMEの
// 誤字を直す": readme), else the sample's most common tag that it can,
// else its roles, each followed by "tasks".
func (d *distiller) fallbackName() string {
	if n := nameFrom(oneLine(d.rep.Title)); n != "" {
		return n
	}
	count := map[string]int{}
	best := ""
	for _, t := range d.tasks {
		for _, tag := range foldTags(t.Tags) {
			if Slug(tag) == "" {
				continue
			}
			count[tag]++
			if n := count[tag]; n > count[best] || n == count[best] && tag < best {
				best = tag
			}
		}
	}
	if best != "" {
		return Slug(best + " tasks")
	}
	roles := d.roles()
	if len(roles) > 3 {
		return "team-tasks"
	}
	return Slug(strings.Join(roles, " ") + " tasks")
}

// commonTitleTokens are the title tokens found in most of the sample's
// titles (all of them, for two).
func (d *distiller) commonTitleTokens() map[string]bool {
	count := map[string]int{}
	for _, t := range d.tasks {
		for _, tok := range t.titleToks {
			count[tok]++
		}
	}
	common := map[string]bool{}
	for tok, n := range count {
		if 2*n > len(d.tasks) {
			common[tok] = true
		}
	}
	return common
}

// titlePhrase is the part of title from its first to its last common word,
// as written ("Add a React form for signup" with add, react, form common:
// "Add a React form"), stopping before a bracket or colon that opens an
// aside. With no common word it is the whole title.
func titlePhrase(title string, common map[string]bool) string {
	title = oneLine(title)
	ws := splitWords(title)
	first, last := -1, -1
	for i, w := range ws {
		if common[fold(w.text)] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	p := title
	if first >= 0 {
		p = title[ws[first].start:ws[last].end]
	}
	if i := strings.IndexAny(p, "([{:;—–"); i > 0 {
		p = p[:i]
	}
	if i := strings.Index(p, " - "); i > 0 {
		p = p[:i]
	}
	return strings.TrimRight(strings.TrimSpace(p), ".,!?")
}

// nameFrom makes a name of a heading's meaningful words, at most six.
func nameFrom(heading string) string {
	var parts []string
	for _, w := range splitWords(heading) {
		if fold(w.text) == "" {
			continue
		}
		parts = append(parts, strings.ToLower(w.text))
		if len(parts) == 6 {
			break
		}
	}
	return Slug(strings.Join(parts, "-"))
}

// describe is the candidate's description: what the skill is and when to
// use it, on one line.
func (d *distiller) describe(heading string) string {
	n := d.in.stats.n
	var b strings.Builder
	switch d.in.kind {
	case KindProposed:
		b.WriteString(oneLine(d.in.proposedDoc))
		if !strings.Contains(strings.ToLower(b.String()), "when") {
			fmt.Fprintf(&b, " Use when a task is like %s.", quoted(d.examples, 1))
		}
	case KindTag:
		fmt.Fprintf(&b, "Recurring work tagged \"%s\": steps, files and pitfalls distilled from %d past tasks. Use when a task is tagged %s or is like %s.",
			d.in.tag, n, d.in.tag, quoted(d.examples, 1))
	default:
		fmt.Fprintf(&b, "%s: steps, files and pitfalls distilled from %d past tasks%s. Use when a task is like %s.",
			heading, n, d.byRoles(), quoted(d.examples, 2))
	}
	return clip(oneLine(b.String()), MaxDescriptionLength)
}

// byRoles names the roles that did the group's tasks, when they are few.
func (d *distiller) byRoles() string {
	roles := d.roles()
	if len(roles) == 0 || len(roles) > 3 {
		return ""
	}
	return " by " + joinAnd(roles)
}

func (d *distiller) roles() []string {
	roles := make([]string, 0, len(d.in.stats.roles))
	for r := range d.in.stats.roles {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// quoted puts up to n examples in double quotes (theirs become single),
// joined with "or".
func quoted(examples []string, n int) string {
	var q []string
	for _, e := range examples {
		if len(q) == n {
			break
		}
		q = append(q, `"`+strings.ReplaceAll(clip(e, 100), `"`, "'")+`"`)
	}
	if len(q) == 0 {
		return "the source tasks below"
	}
	return strings.Join(q, " or ")
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// body is the candidate's Markdown body under heading.
func (d *distiller) body(heading string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", heading)
	d.intro(&b)
	d.goal(&b, heading)
	fs := d.fragments()
	d.steps(&b, recurring(fs.steps, d.minCount))
	d.outcomes(&b, recurring(fs.outcomes, d.minCount))
	d.files(&b)
	d.pitfalls(&b, fs.warnings)
	d.sources(&b)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func (d *distiller) intro(b *strings.Builder) {
	st := d.in.stats
	n := st.n
	statuses := map[string]int{store.StatusDone: st.done, store.StatusFailed: st.failed, store.StatusBlocked: st.blocked}
	var parts []string
	for _, s := range store.ReportStatuses {
		if statuses[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", statuses[s], s))
		}
	}
	from := fmt.Sprintf("%d finished tasks", n)
	if n == 1 {
		from = "1 finished task"
	}
	if len(d.tasks) < n {
		from = fmt.Sprintf("the latest %d of %d finished tasks", len(d.tasks), n)
	}
	roles := d.roles()
	by := ""
	switch {
	case len(roles) == 1:
		by = " by " + roles[0]
	case len(roles) <= 4:
		by = " by " + joinAnd(roles)
	default:
		by = fmt.Sprintf(" by %d roles", len(roles))
	}
	last := d.tasks[len(d.tasks)-1]
	span := dateOf(unixTime(st.firstFinished))
	if l := dateOf(last.FinishedAt); l != span {
		span += " to " + l
	}
	fmt.Fprintf(b, "Distilled by `shogun skills scan` from %s (%s)%s, %s: what those tasks had in common, not a verified procedure.\n\n",
		from, strings.Join(parts, ", "), by, span)
}

// dateOf is a date as the body shows it: UTC, so every machine writes the
// same text.
func dateOf(t time.Time) string {
	if t.IsZero() {
		return "undated"
	}
	return t.UTC().Format("2006-01-02")
}

func (d *distiller) goal(b *strings.Builder, heading string) {
	b.WriteString("## Goal\n\n")
	switch d.in.kind {
	case KindProposed:
		fmt.Fprintf(b, "%s, as an agent proposed it in a report. ", heading)
	case KindTag:
		fmt.Fprintf(b, "Work tagged `%s`. ", d.in.tag)
	default:
		fmt.Fprintf(b, "%s. ", heading)
	}
	fmt.Fprintf(b, "A typical request (%s, %s):\n\n", d.rep.ID, d.rep.Role)
	fmt.Fprintf(b, "> %s\n", oneLine(d.rep.Title))
	lines := 0
	for _, f := range d.cut(d.rep).bodyFrags {
		if lines == 4 {
			b.WriteString(">\n> …\n")
			break
		}
		if lines == 0 {
			b.WriteString(">\n")
		}
		fmt.Fprintf(b, "> %s\n", f.text)
		lines++
	}
	if len(d.examples) > 1 {
		b.WriteString("\nOther requests like it:\n\n")
		for _, e := range d.examples[:min(len(d.examples), maxExamples+1)] {
			if e == oneLine(d.rep.Title) {
				continue
			}
			fmt.Fprintf(b, "- %s\n", clip(e, 120))
		}
	}
	b.WriteString("\n")
}

func (d *distiller) of(n int) string {
	return fmt.Sprintf("%d of %d tasks", n, len(d.tasks))
}

func (d *distiller) steps(b *strings.Builder, steps []*fragStat) {
	b.WriteString("## Steps that recurred\n\n")
	if len(steps) == 0 {
		fmt.Fprintf(b, "No step of the requests recurred in %d or more of the tasks. The most typical one, %s, asked:\n\n", d.minCount, d.rep.ID)
		n := 0
		for _, f := range d.cut(d.rep).bodyFrags {
			if n == maxSteps {
				break
			}
			n++
			fmt.Fprintf(b, "%d. %s\n", n, f.text)
		}
		if n == 0 {
			b.WriteString("(its request gives no steps beyond the title)\n")
		}
		b.WriteString("\n")
		return
	}
	for i, s := range steps {
		if i == maxSteps {
			break
		}
		fmt.Fprintf(b, "%d. %s (%s)\n", i+1, s.text(), d.of(len(s.tasks)))
	}
	b.WriteString("\n")
}

// outcomes lists what the reports recorded again and again: the checks
// and results the work usually ends with.
func (d *distiller) outcomes(b *strings.Builder, outcomes []*fragStat) {
	if len(outcomes) == 0 {
		return
	}
	b.WriteString("## What the reports recorded\n\n")
	for i, s := range outcomes {
		if i == maxSteps {
			break
		}
		fmt.Fprintf(b, "- %s (%s)\n", s.text(), d.of(len(s.tasks)))
	}
	b.WriteString("\n")
}

func (d *distiller) files(b *strings.Builder) {
	count := map[string]int{}
	var order []string
	for _, t := range d.tasks {
		for _, p := range d.cut(t).filePaths {
			if count[p] == 0 {
				order = append(order, p)
			}
			count[p]++
		}
	}
	if len(order) == 0 {
		return
	}
	var rec []string
	for _, p := range order {
		if count[p] >= d.minCount {
			rec = append(rec, p)
		}
	}
	b.WriteString("## Files\n\n")
	if len(rec) == 0 {
		b.WriteString("No file came up in more than one task; these did once:\n\n")
		for i := len(order) - 1; i >= 0 && len(order)-i <= 8; i-- {
			fmt.Fprintf(b, "- `%s`\n", order[i])
		}
		b.WriteString("\n")
		return
	}
	sort.SliceStable(rec, func(i, j int) bool {
		if count[rec[i]] != count[rec[j]] {
			return count[rec[i]] > count[rec[j]]
		}
		return rec[i] < rec[j]
	})
	for i, p := range rec {
		if i == maxFiles {
			fmt.Fprintf(b, "- … and %d more\n", len(rec)-maxFiles)
			break
		}
		fmt.Fprintf(b, "- `%s` (%s)\n", p, d.of(count[p]))
	}
	b.WriteString("\n")
}

// pitfalls lists the warnings found in the tasks and reports, most
// frequent first, then the failed and blocked tasks whose reports gave no
// warning, latest first.
func (d *distiller) pitfalls(b *strings.Builder, warnings []*fragStat) {
	var lines []string
	failedIn := func(s *fragStat) int {
		n := 0
		for _, ti := range s.tasks {
			if d.tasks[ti].Status != store.StatusDone {
				n++
			}
		}
		return n
	}
	sortStable(warnings, func(x, y *fragStat) bool {
		if len(x.tasks) != len(y.tasks) {
			return len(x.tasks) > len(y.tasks)
		}
		return failedIn(x) > failedIn(y)
	})
	warned := map[int]bool{}
	for _, w := range warnings {
		for _, ti := range w.tasks {
			warned[ti] = true
		}
		if len(lines) == maxPitfalls {
			continue
		}
		line := w.text()
		n, failed := len(w.tasks), failedIn(w)
		switch {
		case failed > 0:
			line += fmt.Sprintf(" (%s, %d failed or blocked)", d.of(n), failed)
		case n > 1:
			line += fmt.Sprintf(" (%s)", d.of(n))
		}
		lines = append(lines, line)
	}
	seen := map[string]bool{}
	for i := len(d.tasks) - 1; i >= 0 && len(lines) < maxPitfalls; i-- {
		t := d.tasks[i]
		if t.Status == store.StatusDone || warned[i] {
			continue
		}
		summary := stripStatus(oneLine(t.Summary))
		key := t.Status + ":" + normTitle(summary)
		if seen[key] {
			continue
		}
		seen[key] = true
		line := fmt.Sprintf("%s %s: %s", t.ID, t.Status, clip(summary, 160))
		for _, f := range d.cut(t).detailFrags {
			if normTitle(f.text) != normTitle(summary) {
				line += " — " + clip(f.text, 160)
				break
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Pitfalls\n\n")
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", l)
	}
	b.WriteString("\n")
}

// stripStatus removes a leading "Done:", "Failed:" or "Blocked:" from a
// report summary, which agents often write and the status already says.
func stripStatus(s string) string {
	for _, st := range store.ReportStatuses {
		if p := st + ":"; len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return strings.TrimSpace(s[len(p):])
		}
	}
	return s
}

func (d *distiller) sources(b *strings.Builder) {
	b.WriteString("## Source tasks\n\n")
	n := d.in.stats.n
	from := max(0, n-maxSources)
	for _, t := range d.tasks[max(0, len(d.tasks)-maxSources):] {
		fmt.Fprintf(b, "- `%s` (%s, %s, %s) %s", t.ID, t.Role, dateOf(t.FinishedAt), t.Status, clip(oneLine(t.Title), 100))
		if s := stripStatus(oneLine(t.Summary)); s != "" && normTitle(s) != t.norm {
			fmt.Fprintf(b, " — report: %s", clip(s, 140))
		}
		b.WriteString("\n")
	}
	if from > 0 {
		fmt.Fprintf(b, "- … and %d earlier tasks (`shogun skills list --json` lists every id)\n", from)
	}
}

// unixTime turns unix nanoseconds back into a time; 0 is the zero time.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// unixNano is a time as unix nanoseconds; the zero time is 0.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
