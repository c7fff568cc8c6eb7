package queue

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/store"
)

// Report statuses, as an agent writes them in a report's status: the status
// its task closes with, so they are the history's words.
const (
	ReportDone    = store.StatusDone
	ReportFailed  = store.StatusFailed
	ReportBlocked = store.StatusBlocked
)

var statuses = store.ReportStatuses

// Report is what an agent writes into runtime/queue/reports/ when it has
// finished, given up on, or got stuck on a task.
type Report struct {
	// TaskID is the task_id of the task file the agent was given.
	TaskID string `yaml:"task_id"`
	// Status is ReportDone, ReportFailed or ReportBlocked.
	Status string `yaml:"status"`
	// Summary is the outcome in brief, shown in status and the dashboard;
	// Details is everything else the agent wants kept.
	Summary string `yaml:"summary"`
	Details string `yaml:"details,omitempty"`
	// Files are the paths the agent changed, as it wrote them.
	Files []string `yaml:"files,omitempty"`
	// SkillCandidate is set when the agent proposes a reusable skill; the
	// skills package turns it into a candidate for review.
	SkillCandidate *SkillCandidate `yaml:"skill_candidate,omitempty"`
}

// SkillCandidate is a skill an agent proposes in a report. Its name is
// normalised later, when the candidate is made; here it must only be one
// line.
type SkillCandidate struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Validate reports the first problem with r, or nil.
func (r Report) Validate() error {
	if p := r.problem(); p != nil {
		return p
	}
	return nil
}

func (r Report) problem() *fieldError {
	if p := firstProblem(
		checkRequired("task_id", r.TaskID), checkID("task_id", r.TaskID),
		checkRequired("status", r.Status), checkEnum("status", r.Status, statuses, false),
		checkRequired("summary", r.Summary), checkLine("summary", r.Summary),
		checkText("details", r.Details),
	); p != nil {
		return p
	}
	for i, f := range r.Files {
		field := fmt.Sprintf("files[%d]", i)
		if f == "" {
			return &fieldError{field: field, msg: fmt.Sprintf(`%q must not be empty`, field)}
		}
		if p := checkLine(field, f); p != nil {
			return p
		}
	}
	if sc := r.SkillCandidate; sc != nil {
		return firstProblem(
			checkRequired("skill_candidate.name", sc.Name), checkLine("skill_candidate.name", sc.Name),
			checkRequired("skill_candidate.description", sc.Description), checkText("skill_candidate.description", sc.Description),
		)
	}
	return nil
}

// DecodeReport reads a report file. Every error is a *FormatError naming
// the first problem.
func DecodeReport(name string, data []byte, limits Limits) (Report, error) {
	root, err := parseDocument(name, data, limits)
	if err != nil {
		return Report{}, err
	}
	d := newFormatDecoder(name, "")
	if root.Kind != yaml.MappingNode {
		return Report{}, d.errAt(root, "a report must be a mapping, got %s", yamlstrict.Describe(root))
	}
	fields, err := d.mapping(root, "")
	if err != nil {
		return Report{}, err
	}
	var r Report
	for _, f := range fields {
		var err error
		switch f.name {
		case "task_id":
			r.TaskID, err = d.text(f)
		case "status":
			r.Status, err = d.word(f, statuses)
		case "summary":
			r.Summary, err = d.text(f)
		case "details":
			r.Details, err = d.text(f)
		case "files":
			r.Files, err = d.textList(f)
		case "skill_candidate":
			r.SkillCandidate, err = d.skillCandidate(f)
		default:
			err = d.unknownKey(f, "", reportKeys)
		}
		if err != nil {
			return Report{}, err
		}
	}
	if p := r.problem(); p != nil {
		return Report{}, d.fieldErr(p)
	}
	return r, nil
}

// reportKeys and skillKeys are the keys of a report and of its
// skill_candidate, for "did you mean".
var (
	reportKeys = []string{"task_id", "status", "summary", "details", "files", "skill_candidate"}
	skillKeys  = []string{"name", "description"}
)

func (d *formatDecoder) skillCandidate(f yamlField) (*SkillCandidate, error) {
	if yamlstrict.IsNull(f.val) {
		return nil, nil
	}
	if f.val.Kind != yaml.MappingNode {
		return nil, d.errAt(f.val, `%q must be a mapping with "name" and "description", got %s`, f.path, yamlstrict.Describe(f.val))
	}
	fields, err := d.mapping(f.val, f.path)
	if err != nil {
		return nil, err
	}
	var sc SkillCandidate
	for _, g := range fields {
		var err error
		switch g.name {
		case "name":
			sc.Name, err = d.text(g)
		case "description":
			sc.Description, err = d.text(g)
		default:
			err = d.unknownKey(g, f.path, skillKeys)
		}
		if err != nil {
			return nil, err
		}
	}
	return &sc, nil
}
