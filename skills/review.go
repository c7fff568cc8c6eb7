package skills

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/store"
)

// Review walks the pending candidates one by one in a terminal: it shows
// each (name, description, source tasks, body) and reads one key: a
// approve, r reject, e edit in the editor, s skip, q quit. Ctrl-C and
// Ctrl-D quit too. It prints a summary at the end.
//
// Review only reads bytes and writes text: the caller puts the terminal in
// raw mode (so a key arrives without Enter) and provides Edit, which must
// give the terminal back to the editor while it runs.
type Review struct {
	Store *store.Store
	// In gives the keys, one byte each; Out shows the candidates.
	In  io.Reader
	Out io.Writer
	// Width is the terminal's width in columns; below 20 counts as 20, and
	// 0 means 80. Text is wrapped to it.
	Width int
	// Color allows bold and colour (a terminal without NO_COLOR).
	Color bool
	// CRLF ends lines with "\r\n", as a terminal in raw mode needs.
	CRLF bool
	// Edit opens the file at path in the user's editor and returns when it
	// is closed. Nil leaves the e key out.
	Edit func(path string) error
	// Height is the terminal's height in rows; 0 means unknown.
	Height int
	// Page shows the text of a candidate taller than Height in a pager
	// and returns when the person leaves it; the caller gives the pager
	// the terminal meanwhile. Nil, or an error, prints the candidate
	// whole. After a pager, the candidate's header is printed again above
	// the prompt, and v shows the candidate again.
	Page func(text string) error
	// Now dates the decisions; nil means time.Now.
	Now func() time.Time
}

// ReviewSummary is what a review decided, by candidate name.
type ReviewSummary struct {
	Approved []string `json:"approved"`
	Rejected []string `json:"rejected"`
	Edited   []string `json:"edited"`
	Skipped  []string `json:"skipped"`
	// Left is how many pending candidates were not shown because the
	// review was quit.
	Left int  `json:"left"`
	Quit bool `json:"quit"`
}

// errQuit ends the walk early.
var errQuit = errors.New("quit")

// Run walks the candidates pending when it starts, most-backed first.
func (r *Review) Run() (ReviewSummary, error) {
	if r.Now == nil {
		r.Now = time.Now
	}
	out := r.Out
	if r.CRLF {
		out = &crlfWriter{w: r.Out}
	}
	p := &printer{w: out, width: r.Width, color: r.Color}
	keys := bufio.NewReader(r.In)
	var sum ReviewSummary

	cands, err := r.Store.SkillCandidates(store.SkillPending)
	if err != nil {
		return sum, fmt.Errorf("review: %w", err)
	}
	if len(cands) == 0 {
		p.wrapped("", "No pending skill candidates. `shogun skills scan` looks for repeated work; `shogun skills list` shows the others.")
		return sum, p.err
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if len(cands[i].SourceTaskIDs) != len(cands[j].SourceTaskIDs) {
			return len(cands[i].SourceTaskIDs) > len(cands[j].SourceTaskIDs)
		}
		return cands[i].Name < cands[j].Name
	})
	for i := range cands {
		err := r.one(p, keys, &cands[i], i, len(cands), &sum)
		if errors.Is(err, errQuit) {
			sum.Quit, sum.Left = true, len(cands)-i
			break
		}
		if err != nil {
			return sum, err
		}
	}
	r.summary(p, sum)
	return sum, p.err
}

// one shows a candidate and acts on keys until one decides it.
func (r *Review) one(p *printer, keys *bufio.Reader, c *store.SkillCandidate, i, n int, sum *ReviewSummary) error {
	r.show(p, c, i, n)
	prompt := true
	for {
		if prompt {
			p.prompt(r.Edit != nil)
		}
		prompt = true
		k, err := readKey(keys)
		if err != nil {
			p.line("")
			if errors.Is(err, io.EOF) {
				return errQuit
			}
			return fmt.Errorf("review: read key: %w", err)
		}
		switch k {
		case 'a', 'r':
			status, word := store.SkillApproved, "approved"
			if k == 'r' {
				status, word = store.SkillRejected, "rejected"
			}
			p.raw(string(k))
			p.line("")
			if _, err := r.Store.DecideSkillCandidates([]store.SkillVerdict{{Name: c.Name, Status: status}}, "review", r.Now()); err != nil {
				return fmt.Errorf("review: %w", err)
			}
			col := green
			if k == 'r' {
				col = red
			}
			p.wrapped("", p.paint(col, word+" "+c.Name))
			if k == 'a' {
				sum.Approved = append(sum.Approved, c.Name)
			} else {
				sum.Rejected = append(sum.Rejected, c.Name)
			}
			return p.err
		case 's':
			p.raw("s")
			p.line("")
			p.wrapped("", "skipped "+c.Name+" (still pending)")
			sum.Skipped = append(sum.Skipped, c.Name)
			return p.err
		case 'q', 3, 4: // q, Ctrl-C, Ctrl-D
			p.raw("q")
			p.line("")
			return errQuit
		case 'e':
			if r.Edit == nil {
				p.line("")
				p.wrapped("", "editing is not available here")
				continue
			}
			p.raw("e")
			p.line("")
			changed, err := r.edit(p, c)
			if err != nil {
				return err
			}
			if changed {
				if !contains(sum.Edited, c.Name) {
					sum.Edited = append(sum.Edited, c.Name)
				}
				r.show(p, c, i, n)
			}
		case 'v':
			p.raw("v")
			p.line("")
			r.show(p, c, i, n)
		case '\r', '\n':
			prompt = false // Enter alone: keep waiting on the same prompt
		default:
			p.line("")
			keysHelp := "keys: a approve, r reject, e edit, s skip, q quit, v view again"
			if r.Edit == nil {
				keysHelp = "keys: a approve, r reject, s skip, q quit, v view again"
			}
			p.wrapped("", keysHelp)
		}
		if p.err != nil {
			return p.err
		}
	}
}

// edit lets the person edit the candidate as a skill file and keeps a
// valid result. It reports whether the candidate changed.
func (r *Review) edit(p *printer, c *store.SkillCandidate) (bool, error) {
	f, err := os.CreateTemp("", "shogun-skill-*.md")
	if err != nil {
		return false, fmt.Errorf("review: edit %s: %w", c.Name, err)
	}
	path := f.Name()
	defer os.Remove(path)
	cur := Document{Name: c.Name, Description: c.Description, Body: c.Body}
	_, werr := f.Write(Render(cur))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("review: edit %s: %w", c.Name, werr)
	}
	if err := r.Edit(path); err != nil {
		p.wrapped("", p.paint(red, "editor failed: "+err.Error()+"; nothing changed"))
		return false, p.err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("review: edit %s: %w", c.Name, err)
	}
	upd, changed, err := EditText(r.Store, *c, data, "review", r.Now())
	var refused *EditRefusedError
	switch {
	case errors.As(err, &refused):
		p.wrapped("", p.paint(red, "edit not kept: "+refused.Reason))
		return false, p.err
	case err != nil:
		return false, fmt.Errorf("review: %w", err)
	case !changed:
		p.line("no change")
		return false, p.err
	}
	*c = upd
	p.line("edit kept")
	return true, p.err
}

// EditRefusedError is an edit of a candidate that was not kept, and why:
// the text is not a valid skill file, or its name is another candidate's.
// Nothing changed.
type EditRefusedError struct {
	Name   string // the candidate's name before the edit
	Reason string
}

func (e *EditRefusedError) Error() string {
	return fmt.Sprintf("edit of skill %s not kept: %s", e.Name, e.Reason)
}

// EditText applies a person's edit of candidate c, given as the text of its
// skill file (Render's, as the review's editor shows it, changed): parsed
// and validated as a skill file, and stored unless it is unchanged. It
// returns the candidate as it is now and whether the edit changed it. A
// text that is not a valid skill file, or a name another candidate has,
// gives an *EditRefusedError; an exported candidate store.ErrSkillExported.
// `shogun skills review` and the console's edit both come here.
func EditText(st *store.Store, c store.SkillCandidate, text []byte, by string, at time.Time) (store.SkillCandidate, bool, error) {
	cur := Document{Name: c.Name, Description: c.Description, Body: c.Body}
	doc, err := Parse(text)
	if err == nil {
		err = doc.Validate()
	}
	if err != nil {
		return c, false, &EditRefusedError{Name: c.Name, Reason: err.Error()}
	}
	if doc == cur {
		return c, false, nil
	}
	upd, err := st.EditSkillCandidate(c.ID, doc.Name, doc.Description, doc.Body, by, at)
	if errors.Is(err, store.ErrSkillNameTaken) {
		return c, false, &EditRefusedError{Name: c.Name, Reason: "another candidate is named " + doc.Name}
	}
	if err != nil {
		return c, false, fmt.Errorf("edit skill %s: %w", c.Name, err)
	}
	return upd, true, nil
}

// readKey reads one key, skipping terminal escape sequences (arrow keys
// and the like), so that none of their bytes is taken for a command.
func readKey(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != 0x1b {
			return b, nil
		}
		next, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if next != '[' && next != 'O' {
			return next, nil
		}
		for {
			c, err := r.ReadByte()
			if err != nil {
				return 0, err
			}
			if c >= 0x40 && c <= 0x7e {
				break
			}
		}
	}
}

var kindWords = map[string]string{
	KindProposed: "proposed by an agent",
	KindTitle:    "same role and title",
	KindSimilar:  "near-duplicate titles and bodies",
	KindTag:      "shared tag",
}

// maxShownSources bounds the source tasks shown per candidate.
const maxShownSources = 8

// show shows a candidate: through Page when it is taller than the
// terminal, its header then printed again so that the prompt below says
// what it is about; else printed whole.
func (r *Review) show(p *printer, c *store.SkillCandidate, i, n int) {
	if r.Page != nil && r.Height > 0 {
		var text bytes.Buffer
		r.render(&printer{w: &text, width: p.width, color: p.color}, c, i, n)
		// The prompt and the line after the pager need two rows.
		if strings.Count(text.String(), "\n") > r.Height-2 {
			if err := r.Page(text.String()); err == nil {
				p.line("")
				r.header(p, c, i, n)
				p.wrapped("  ", p.paint(dim, "shown in the pager; v shows it again"))
				return
			}
		}
	}
	r.render(p, c, i, n)
}

// header is the first lines of a candidate: which one, and its name.
func (r *Review) header(p *printer, c *store.SkillCandidate, i, n int) {
	p.wrapped("", p.paint(bold, fmt.Sprintf("Skill candidate %d of %d", i+1, n))+
		fmt.Sprintf(" (%d tasks, %s)", len(c.SourceTaskIDs), kindWords[c.Kind]))
	p.label("name")
	p.wrapped("  ", p.paint(bold, c.Name))
}

// render prints a whole candidate.
func (r *Review) render(p *printer, c *store.SkillCandidate, i, n int) {
	p.line("")
	p.rule()
	r.header(p, c, i, n)
	p.label("description")
	p.wrapped("  ", c.Description)
	p.label("source tasks")
	ids := c.SourceTaskIDs
	from := max(0, len(ids)-maxShownSources)
	for _, id := range ids[from:] {
		t, err := r.Store.Task(id)
		if err != nil {
			p.wrapped("  ", id+" (no longer in the history)")
			continue
		}
		when := t.FinishedAt
		if when.IsZero() {
			when = t.CreatedAt
		}
		p.wrapped("  ", fmt.Sprintf("%s  %s  %s  %s", t.ID, t.Role, when.Local().Format("2006-01-02"), t.Status))
		p.wrapped("    ", oneLine(t.Title))
		if s := stripStatus(oneLine(t.Summary)); s != "" {
			p.wrapped("    ", p.paint(dim, "report: "+clip(s, 200)))
		}
	}
	if from > 0 {
		p.wrapped("  ", fmt.Sprintf("… and %d earlier tasks", from))
	}
	p.label("body")
	for _, l := range strings.Split(strings.TrimRight(c.Body, "\n"), "\n") {
		p.wrapped("  ", l)
	}
	p.rule()
}

func (r *Review) summary(p *printer, s ReviewSummary) {
	p.line("")
	parts := []string{
		fmt.Sprintf("%d approved", len(s.Approved)),
		fmt.Sprintf("%d rejected", len(s.Rejected)),
		fmt.Sprintf("%d skipped", len(s.Skipped)),
	}
	if len(s.Edited) > 0 {
		parts = append(parts, fmt.Sprintf("%d edited", len(s.Edited)))
	}
	if s.Quit {
		parts = append(parts, fmt.Sprintf("%d not reviewed (quit)", s.Left))
	}
	p.wrapped("", p.paint(bold, "Review done: ")+strings.Join(parts, ", ")+".")
	for _, l := range []struct {
		word  string
		names []string
	}{{"approved", s.Approved}, {"rejected", s.Rejected}, {"edited", s.Edited}, {"skipped", s.Skipped}} {
		if len(l.names) > 0 {
			p.wrapped("  ", l.word+": "+strings.Join(l.names, ", "))
		}
	}
	if len(s.Approved) > 0 {
		p.wrapped("", "Next: shogun skills export (writes approved skills for Codex and Copilot; --layout dir for the CLIs' own folders)")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Decide is the review without a terminal: it approves and rejects
// candidates by name, all or nothing, recording each decision as made by
// "cli". A name in both lists is an error.
func Decide(st *store.Store, approve, reject []string, at time.Time) ([]store.SkillCandidate, error) {
	return DecideBy(st, approve, reject, "cli", at)
}

// DecideBy is Decide with the decisions recorded as made by by ("console"
// for the web console's buttons).
func DecideBy(st *store.Store, approve, reject []string, by string, at time.Time) ([]store.SkillCandidate, error) {
	var vs []store.SkillVerdict
	seen := map[string]string{}
	for _, l := range []struct {
		names  []string
		status string
	}{{approve, store.SkillApproved}, {reject, store.SkillRejected}} {
		for _, n := range l.names {
			if prev, ok := seen[n]; ok && prev != l.status {
				return nil, fmt.Errorf("review: %s is both approved and rejected", n)
			}
			if _, ok := seen[n]; ok {
				continue
			}
			seen[n] = l.status
			vs = append(vs, store.SkillVerdict{Name: n, Status: l.status})
		}
	}
	if len(vs) == 0 {
		return nil, errors.New("review: no names to approve or reject")
	}
	cs, err := st.DecideSkillCandidates(vs, by, at)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	return cs, nil
}

// printer writes wrapped, optionally coloured lines and keeps the first
// write error.
type printer struct {
	w     io.Writer
	width int
	color bool
	err   error
}

const (
	bold  = "1"
	dim   = "2"
	red   = "31"
	green = "32"
)

func (p *printer) cols() int {
	switch {
	case p.width <= 0:
		return 80
	case p.width < 20:
		return 20
	}
	return p.width
}

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) raw(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

func (p *printer) line(s string) { p.raw(s + "\n") }

func (p *printer) rule() {
	p.line(p.paint(dim, strings.Repeat("-", min(p.cols()-1, 72))))
}

func (p *printer) label(s string) { p.line(p.paint(bold, s)) }

func (p *printer) prompt(edit bool) {
	switch {
	case p.cols() >= 52 && edit:
		p.raw(p.paint(bold, "[a]pprove [r]eject [e]dit [s]kip [q]uit > "))
	case p.cols() >= 46 && !edit:
		p.raw(p.paint(bold, "[a]pprove [r]eject [s]kip [q]uit > "))
	case edit:
		p.raw(p.paint(bold, "a/r/e/s/q > "))
	default:
		p.raw(p.paint(bold, "a/r/s/q > "))
	}
}

// wrapped writes s after indent, wrapped at word boundaries to the width
// (a word longer than a line is cut), continuation lines indented alike.
func (p *printer) wrapped(indent, s string) {
	for _, l := range wrap(s, p.cols()-1-cellWidth(indent)) {
		p.line(indent + l)
	}
}

// wrap breaks s into lines of at most width cells, at spaces; a word
// longer than a line is cut. A line that fits is kept exactly as written,
// and a long one keeps its leading indentation on every piece. ANSI colour
// sequences take no room.
func wrap(s string, width int) []string {
	width = max(width, 10)
	if cellWidth(s) <= width {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	// Continuation lines hang under a list item's text and stay in a quote.
	hang := indent
	switch rest := s[len(indent):]; {
	case strings.HasPrefix(rest, "> "):
		hang += "> "
	case strings.HasPrefix(rest, "- "), strings.HasPrefix(rest, "* "):
		hang += "  "
	default:
		if i := strings.Index(rest, ". "); i > 0 && i <= 3 && strings.Trim(rest[:i], "0123456789") == "" {
			hang += strings.Repeat(" ", i+2)
		}
	}
	if cellWidth(hang) > width/2 {
		hang = ""
	}
	var lines []string
	cur, curW, empty := indent, cellWidth(indent), true
	newLine := func() {
		lines = append(lines, cur)
		cur, curW, empty = hang, cellWidth(hang), true
	}
	for _, w := range strings.Fields(s) {
		ww := cellWidth(w)
		if !empty && curW+1+ww > width {
			newLine()
		}
		for empty && ww > width-curW {
			head, rest := cutCells(w, width-curW)
			if head == "" {
				break
			}
			cur += head
			newLine()
			w, ww = rest, cellWidth(rest)
		}
		if ww == 0 {
			continue
		}
		if !empty {
			cur += " "
			curW++
		}
		cur, curW, empty = cur+w, curW+ww, false
	}
	if !empty {
		newLine()
	}
	return lines
}

// cellWidth is the width of s on a terminal: wide East Asian characters
// take two cells, escape sequences none.
func cellWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			i += j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	if r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) || (r >= 0xff00 && r <= 0xff60) || (r >= 0x3000 && r <= 0x303f)) {
		return 2
	}
	return 1
}

// cutCells splits s after at most n cells, never inside an escape
// sequence.
func cutCells(s string, n int) (string, string) {
	w := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j >= 0 {
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		c := runeCells(r)
		if w+c > n {
			return s[:i], s[i:]
		}
		w += c
		i += size
	}
	return s, ""
}

// crlfWriter turns "\n" into "\r\n" for a terminal in raw mode, which no
// longer does it itself.
type crlfWriter struct{ w io.Writer }

func (c *crlfWriter) Write(b []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}
