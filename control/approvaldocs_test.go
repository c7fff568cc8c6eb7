package control

import (
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// The approvals' JSON in docs/api.md matches its Go types key by key.
func TestApprovalDocsMatchTheTypes(t *testing.T) {
	for heading, v := range map[string]any{
		"### The body — `ApprovalRequest`":        ApprovalRequest{},
		"### An approval — `Approval`":            Approval{},
		"## GET /v1/approvals — `ApprovalsReply`": ApprovalsReply{},
		"### The body — `AnswerRequest`":          AnswerRequest{},
	} {
		t.Run(heading, func(t *testing.T) {
			shoguntest.CheckDocShape(t, shoguntest.ReadDocShape(t, "api.md", heading), v)
		})
	}
}
