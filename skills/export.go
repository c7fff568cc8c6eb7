package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// Export targets: the CLIs that load skills.
const (
	TargetCodex   = "codex"
	TargetCopilot = "copilot"
	TargetClaude  = "claude"
	// TargetAll is every target that has a folder in the chosen layout.
	TargetAll = "all"
)

// Export layouts.
const (
	// LayoutFlat writes <folder>/<name>.md, the seed's skills/codex and
	// skills/copilot folders.
	LayoutFlat = "flat"
	// LayoutDir writes <folder>/<name>/SKILL.md, the Agent Skills layout
	// the CLIs load from their project folders.
	LayoutDir = "dir"
)

// Targets lists the export targets.
var Targets = []string{TargetCodex, TargetCopilot, TargetClaude}

// DirDefault is the project folder, relative to the workspace, where the
// target's CLI loads skills in the dir layout: .claude/skills,
// .github/skills or .codex/skills; "" for an unknown target.
func DirDefault(target string) string {
	switch target {
	case TargetClaude:
		return filepath.Join(".claude", "skills")
	case TargetCopilot:
		return filepath.Join(".github", "skills")
	case TargetCodex:
		return filepath.Join(".codex", "skills")
	}
	return ""
}

// ExportOptions say what to export where.
type ExportOptions struct {
	// Targets are the CLIs to export for; empty or TargetAll means every
	// target with a folder in the layout (flat: codex and copilot; dir:
	// all three).
	Targets []string
	// Layout is LayoutFlat (the default) or LayoutDir.
	Layout string
	// Out, if set, is the folder for every target instead of its own.
	Out string
	// Workspace is the workspace folder; the dir layout's default folders
	// are under it.
	Workspace string
	// CodexPath and CopilotPath are the flat layout's folders
	// (skills.codex_path and skills.copilot_path, absolute).
	CodexPath, CopilotPath string
	// Names limits the export to these skills; empty means every approved
	// or already exported candidate.
	Names []string
	// Now dates the records; nil means time.Now.
	Now func() time.Time
}

// ExportedFile is one file an export wrote or found already written.
type ExportedFile struct {
	Name    string   `json:"name"`
	Targets []string `json:"targets"`
	Path    string   `json:"path"`
	// Written is false when an identical file was already there.
	Written bool `json:"written"`
}

// ExportResult lists the files of an export, by name and path.
type ExportResult struct {
	Files []ExportedFile `json:"files"`
}

// Clash is an existing file that differs from the skill to be written.
type Clash struct {
	Name, Path string
}

// ClashError is returned when files in the way differ from the skills;
// nothing was written. Export never overwrites.
type ClashError struct {
	Clashes []Clash
}

func (e *ClashError) Error() string {
	var b strings.Builder
	b.WriteString("export refused, nothing written: ")
	for i, c := range e.Clashes {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s exists and differs from skill %s", c.Path, c.Name)
	}
	b.WriteString(" (shogun never overwrites: move the file away, or leave that skill out with --name)")
	return b.String()
}

// ErrNothingToExport means no candidate is approved (or exported before).
var ErrNothingToExport = errors.New("no approved skills to export")

// Export writes approved (and already exported) candidates as skill files
// (Render) for each target and marks them exported, recording one skills
// row per target and file. It is idempotent: a file already there with the
// same content is left alone and reported unwritten. Any file in the way
// with other content is a clash: then nothing is written, and the error is
// a *ClashError naming every clash.
func Export(st *store.Store, opts ExportOptions) (ExportResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	layout := opts.Layout
	if layout == "" {
		layout = LayoutFlat
	}
	if layout != LayoutFlat && layout != LayoutDir {
		return ExportResult{}, fmt.Errorf("export: layout %q: want %s or %s", layout, LayoutFlat, LayoutDir)
	}
	targets, err := exportTargets(opts, layout)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export: %w", err)
	}
	cands, err := exportable(st, opts.Names)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export: %w", err)
	}

	type plan struct {
		file ExportedFile
		data []byte
		c    store.SkillCandidate
	}
	byPath := map[string]*plan{}
	var plans []*plan
	for _, c := range cands {
		doc := Document{Name: c.Name, Description: c.Description, Body: c.Body}
		if err := doc.Validate(); err != nil {
			return ExportResult{}, fmt.Errorf("export %s: %w", c.Name, err)
		}
		data := Render(doc)
		for _, tg := range targets {
			p := filepath.Join(tg.dir, c.Name+".md")
			if layout == LayoutDir {
				p = filepath.Join(tg.dir, c.Name, "SKILL.md")
			}
			if pl := byPath[p]; pl != nil {
				pl.file.Targets = append(pl.file.Targets, tg.name)
				continue
			}
			pl := &plan{file: ExportedFile{Name: c.Name, Targets: []string{tg.name}, Path: p}, data: data, c: c}
			byPath[p] = pl
			plans = append(plans, pl)
		}
	}

	var clashes []Clash
	for _, pl := range plans {
		have, err := os.ReadFile(pl.file.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			pl.file.Written = true
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) && isDir(pl.file.Path) {
				clashes = append(clashes, Clash{Name: pl.c.Name, Path: pl.file.Path})
				continue
			}
			return ExportResult{}, fmt.Errorf("export %s: %w", pl.c.Name, err)
		case !bytes.Equal(normaliseEOL(have), pl.data):
			clashes = append(clashes, Clash{Name: pl.c.Name, Path: pl.file.Path})
		}
	}
	if len(clashes) > 0 {
		return ExportResult{}, &ClashError{Clashes: clashes}
	}

	var rows []store.Skill
	res := ExportResult{}
	for _, pl := range plans {
		if pl.file.Written {
			if err := writeNew(pl.file.Path, pl.data); err != nil {
				return res, fmt.Errorf("export %s: %w", pl.c.Name, err)
			}
		}
		sum := sha256.Sum256(pl.data)
		for _, tg := range pl.file.Targets {
			rows = append(rows, store.Skill{CandidateID: pl.c.ID, Name: pl.c.Name, Description: pl.c.Description,
				Body: pl.c.Body, Target: tg, Layout: layout, Path: pl.file.Path, SHA256: hex.EncodeToString(sum[:])})
		}
		res.Files = append(res.Files, pl.file)
	}
	if err := st.RecordSkillExports(rows, opts.Now()); err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	sort.SliceStable(res.Files, func(i, j int) bool {
		a, b := res.Files[i], res.Files[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Path < b.Path
	})
	return res, nil
}

type exportTarget struct{ name, dir string }

// exportTargets resolves the targets' folders for the layout.
func exportTargets(o ExportOptions, layout string) ([]exportTarget, error) {
	names := o.Targets
	all := len(names) == 0
	for _, n := range names {
		if n == TargetAll {
			all = true
		}
	}
	if all {
		names = Targets
	}
	var out []exportTarget
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		var dir string
		switch {
		case n != TargetCodex && n != TargetCopilot && n != TargetClaude:
			return nil, fmt.Errorf("target %q: want %s, %s, %s or %s", n, TargetCodex, TargetCopilot, TargetClaude, TargetAll)
		case o.Out != "":
			dir = o.Out
		case layout == LayoutDir:
			if o.Workspace == "" {
				return nil, errors.New("dir layout needs the workspace folder or an output folder")
			}
			dir = filepath.Join(o.Workspace, DirDefault(n))
		case n == TargetCodex:
			dir = o.CodexPath
		case n == TargetCopilot:
			dir = o.CopilotPath
		case all:
			continue // claude loads only the dir layout; "all" means those that have a folder
		default:
			return nil, fmt.Errorf("target %s has no flat folder (Claude Code loads <name>/SKILL.md): use --layout dir or --out DIR", n)
		}
		if dir == "" {
			return nil, fmt.Errorf("target %s: no folder (set skills.%s_path or give an output folder)", n, n)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", n, err)
		}
		out = append(out, exportTarget{name: n, dir: abs})
	}
	return out, nil
}

// exportable returns the candidates to export: the named ones, which must
// be approved or exported, or every approved or exported one.
func exportable(st *store.Store, names []string) ([]store.SkillCandidate, error) {
	if len(names) > 0 {
		var out []store.SkillCandidate
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			c, err := st.SkillCandidate(n)
			if err != nil {
				return nil, err
			}
			if c.Status != store.SkillApproved && c.Status != store.SkillExported {
				return nil, fmt.Errorf("skill %s is %s: approve it first (shogun skills review --approve %s)", n, c.Status, n)
			}
			out = append(out, c)
		}
		return out, nil
	}
	all, err := st.SkillCandidates("")
	if err != nil {
		return nil, err
	}
	var out []store.SkillCandidate
	for _, c := range all {
		if c.Status == store.SkillApproved || c.Status == store.SkillExported {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, ErrNothingToExport
	}
	return out, nil
}

// writeNew creates path with data, refusing to replace a file that appeared
// meanwhile, and removes what it wrote if writing fails.
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// normaliseEOL lets a file checked out with Windows line ends count as the
// same skill.
func normaliseEOL(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }
