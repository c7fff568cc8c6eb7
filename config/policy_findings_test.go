package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shogun-dev/shogun/policy"
)

// TestDefaultPolicyGuardsAgainstWholeFolderForms: commands that name a
// folder holding the guards (runtime, ., a patch, a branch) rather than
// the guarded file reach it all the same. Skipped: each is a finding of
// the hostile-agent test (issue 32) without a small fix.
func TestDefaultPolicyGuardsAgainstWholeFolderForms(t *testing.T) {
	t.Skip("finding (issue 32): the default policy allows reading runtime/state/ui.token and data/shogun.db " +
		"through a folder that holds them (grep -r . runtime, grep -r token ., cp -r runtime x, " +
		"find . -type f -exec cat {} +), writing guarded files through git (git apply/am of a patch, " +
		"git checkout/merge/cherry-pick/rebase/stash pop of a commit that holds .claude/settings.local.json " +
		"or config/policy.yaml) and through sed's own commands (w FILE, r FILE, e COMMAND); " +
		"path rules match the words a command names, not what a recursive command or a patch reaches. " +
		"sandbox: true holds all of them on Linux")
	dir := t.TempDir()
	if _, err := Scaffold(dir, ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	ws := cfg.Workspace
	if err := os.MkdirAll(filepath.Join(ws, "runtime", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "runtime", "state", "ui.token"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := policy.Place{Dir: ws, Workspace: ws, OnBaseBranch: true, Home: t.TempDir()}
	for _, c := range []string{
		"grep -r . runtime",
		"grep -r token .",
		"cp -r runtime x",
		"find . -type f -exec cat {} +",
		"git apply evil.patch",
		"git am evil.mbox",
		"git checkout evil",
		"git merge evil",
		"git stash pop",
		"sed -n 'w config/policy.yaml' x",
		"sed 'r runtime/state/ui.token' x",
		"sed '1e cat runtime/state/ui.token' x",
	} {
		if v := cfg.Policy.Decide("ashigaru1", root, policy.Action{Kind: policy.Shell, Command: c}); v.Decision == policy.Allow {
			t.Errorf("%q is allowed (%s); it reaches a guarded file", c, v.Reason)
		}
	}
}
