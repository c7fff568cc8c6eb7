package control

import (
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// The console pages' JSON in docs/api.md matches its Go types key by key,
// as the other endpoints' do (TestAPIDocsMatchTheTypes).
func TestPagesDocsMatchTheTypes(t *testing.T) {
	for heading, v := range map[string]any{
		"### The data of a config event — `ConfigEvent`":   ConfigEvent{},
		"### The data of a dropped event — `DroppedEvent`": DroppedEvent{},
		"## GET /v1/tasks — `TasksReply`":                  TasksReply{},
		"## GET /v1/tasks/{id} — `TaskDetailReply`":        TaskDetailReply{},
		"### The body — `SendRequest`":                     SendRequest{},
		"### The answer — `SendReply`":                     SendReply{},
		"## GET /v1/runs — `RunsReply`":                    RunsReply{},
		"## GET /v1/skills — `SkillsReply`":                SkillsReply{},
		"### The body — `SkillEditRequest`":                SkillEditRequest{},
		"### The answer — `SkillEditReply`":                SkillEditReply{},
		"### The body — `SkillExportRequest`":              SkillExportRequest{},
		"### The answer — `SkillExportReply`":              SkillExportReply{},
	} {
		t.Run(heading, func(t *testing.T) {
			shoguntest.CheckDocShape(t, shoguntest.ReadDocShape(t, "api.md", heading), v)
		})
	}
}
