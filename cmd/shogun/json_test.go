package main

import (
	"testing"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/skills"
)

// The headings of docs/json.md, one per --json output that has its own
// shape there (status and screen print the API's, in docs/api.md).
const (
	docTasks       = "## shogun tasks --json — `control.Task`"
	docSkillsScan  = "## shogun skills scan --json — `skills.ScanResult`"
	docSkillsList  = "## shogun skills list --json — `skills.ListEntry`"
	docSkillExport = "## shogun skills export --json — `skills.ExportResult`"
	docWorktrees   = "## shogun worktrees --json — `gitwork.Status`"
	docAccounts    = "## shogun accounts --json — `control.AccountReply`"
	docStatus      = "## GET /v1/status — `StatusReply`"
	docScreen      = "## GET /v1/roles/{id}/screen — `ScreenReply`"
)

// docs/json.md documents each --json output by its Go type; every key of
// the type is in the example and the table, and nothing else is.
func TestJSONDocsMatchTheTypes(t *testing.T) {
	for heading, v := range map[string]any{
		docTasks:       []control.Task{},
		docSkillsScan:  skills.ScanResult{},
		docSkillsList:  []skills.ListEntry{},
		docSkillExport: skills.ExportResult{},
		docWorktrees:   []gitwork.Status{},
		docAccounts:    []control.AccountReply{},
	} {
		t.Run(heading, func(t *testing.T) {
			shoguntest.CheckDocShape(t, shoguntest.ReadDocShape(t, "json.md", heading), v)
		})
	}
}
