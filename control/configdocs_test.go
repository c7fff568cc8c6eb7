package control

import (
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// The live configuration's JSON in docs/api.md matches its Go types key by
// key, as the other endpoints' do (TestAPIDocsMatchTheTypes).
func TestLiveConfigDocsMatchTheTypes(t *testing.T) {
	for heading, v := range map[string]any{
		"## GET /v1/roles — `RolesReply`":              RolesReply{},
		"## GET /v1/config — `ConfigReply`":            ConfigReply{},
		"## POST /v1/reload — `ReloadReply`":           ReloadReply{},
		"## Configuration errors — `ConfigErrorReply`": ConfigErrorReply{},
		"### The body — `RoleEditRequest`":             RoleEditRequest{},
	} {
		t.Run(heading, func(t *testing.T) {
			shoguntest.CheckDocShape(t, shoguntest.ReadDocShape(t, "api.md", heading), v)
		})
	}
}
