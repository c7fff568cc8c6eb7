package control

import (
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// docs/api.md documents each JSON body by its Go type; every key of the
// type is in the example and the table, and nothing else is.
func TestAPIDocsMatchTheTypes(t *testing.T) {
	for heading, v := range map[string]any{
		"## GET /v1/status — `StatusReply`":                StatusReply{},
		"## GET /v1/roles/{id}/screen — `ScreenReply`":     ScreenReply{},
		"### The body — `TypeRequest`":                     TypeRequest{},
		"### The answer — `TypeReply`":                     TypeReply{},
		"## POST /v1/roles/{id}/restart — `RestartReply`":  RestartReply{},
		"## POST /v1/stop — `StopReply`":                   StopReply{},
		"## POST /v1/attention/dismiss — `DismissReply`":   DismissReply{},
		"## Errors — `ErrorReply`":                         ErrorReply{},
		"### The body — `CancelRequest`":                   CancelRequest{},
		"### The answer to retry and cancel — `TaskReply`": TaskReply{},
		"## GET /v1/usage — `UsageReply`":                  UsageReply{},
		"## POST /v1/roles/{id}/session — `SessionReport`": SessionReport{},
	} {
		t.Run(heading, func(t *testing.T) {
			shoguntest.CheckDocShape(t, shoguntest.ReadDocShape(t, "api.md", heading), v)
		})
	}
}
