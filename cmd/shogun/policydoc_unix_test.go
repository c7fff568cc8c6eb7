//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/shoguntest"
)

// The policy docs/approvals.md shows loads as written, and means what the
// page says of it.
func TestReadmePolicyExampleLoads(t *testing.T) {
	var example string
	for _, b := range shoguntest.DocBlocks(t) {
		if b.File == "docs/approvals.md" && exampleKind(b) == exPolicy {
			example = b.Text
			break
		}
	}
	if example == "" {
		t.Fatal("docs/approvals.md shows no config/policy.yaml")
	}
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "policy.yaml"), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatalf("the policy of docs/approvals.md does not load: %v\n%s", err, example)
	}
	place := policy.Place{Dir: ws, Workspace: ws}
	for _, tc := range []struct {
		role string
		a    policy.Action
		want policy.Decision
	}{
		{"ashigaru1", policy.Action{Kind: policy.Shell, Command: "go test ./..."}, policy.Allow},
		{"ashigaru1", policy.Action{Kind: policy.Shell, Command: "go test ./... && curl https://x"}, policy.Deny},
		{"karo", policy.Action{Kind: policy.Fetch, URL: "https://pkg.go.dev/x"}, policy.Allow},
		{"ashigaru1", policy.Action{Kind: policy.Fetch, URL: "https://pkg.go.dev/x"}, policy.Ask},
		{"ashigaru1", policy.Action{Kind: policy.Write, Path: "main.go"}, policy.Allow},
	} {
		if v := cfg.Policy.Decide(tc.role, place, tc.a); v.Decision != tc.want {
			t.Errorf("%s: %s %q = %s (%s), want %s", tc.role, tc.a.Kind, tc.a.Subject(), v.Decision, v.Reason, tc.want)
		}
	}
}
