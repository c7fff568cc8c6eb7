package skills

import (
	"time"

	"github.com/shogun-dev/shogun/store"
)

// ListEntry is a candidate as `shogun skills list --json` prints it (an
// array of them; docs/json.md).
type ListEntry struct {
	Name   string `json:"name"`
	Status string `json:"status"` // store.SkillPending, SkillApproved, SkillRejected or SkillExported
	// Tasks is the number of source tasks.
	Tasks       int    `json:"tasks"`
	Kind        string `json:"kind"` // KindProposed, KindTitle, KindSimilar or KindTag
	Description string `json:"description"`
	Body        string `json:"body"`
	// SourceTaskIDs are the tasks of its group, in arrival order.
	SourceTaskIDs []string  `json:"source_task_ids"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// Edited says a person edited the text, which a scan then keeps.
	Edited bool `json:"edited"`
}

// ListEntries are the candidates as ListEntry shows them.
func ListEntries(cands []store.SkillCandidate) []ListEntry {
	out := make([]ListEntry, 0, len(cands))
	for _, c := range cands {
		ids := c.SourceTaskIDs
		if ids == nil {
			ids = []string{}
		}
		out = append(out, ListEntry{Name: c.Name, Status: c.Status, Tasks: len(c.SourceTaskIDs), Kind: c.Kind,
			Description: c.Description, Body: c.Body, SourceTaskIDs: ids,
			CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Edited: !c.EditedAt.IsZero()})
	}
	return out
}
