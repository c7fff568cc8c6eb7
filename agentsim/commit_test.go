package agentsim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// With CommitWork the agent's work is a commit in its working directory,
// and the report names the file.
func TestCommitWorkCommitsAFile(t *testing.T) {
	shoguntest.GitEnv(t)
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		os.Unsetenv(k) // t.Setenv in GitEnv restores them
	}
	dir := t.TempDir()
	shoguntest.GitRepo(t, dir, map[string]string{"README.md": "hi\n"})
	t.Chdir(dir)
	w := simulatedWork{role: "ashigaru1", commit: "notes/work.md"}
	rep, _, err := w.handle(context.Background(), &task{TaskID: "t-20261122-0001", Title: "Add notes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || rep.Files[0] != "notes/work.md" || rep.Status != "done" {
		t.Errorf("report %+v", rep)
	}
	b, err := os.ReadFile(filepath.Join(dir, "notes", "work.md"))
	if err != nil || !strings.Contains(string(b), "# Add notes") || !strings.Contains(string(b), "ashigaru1 worked on t-20261122-0001") {
		t.Errorf("work file %q, %v", b, err)
	}
	if got := shoguntest.Git(t, dir, "log", "-1", "--format=%an|%s"); got != "agent-sim ashigaru1|t-20261122-0001: Add notes" {
		t.Errorf("last commit %q", got)
	}
	if got := shoguntest.Git(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("uncommitted after the work:\n%s", got)
	}
	head := shoguntest.Git(t, dir, "rev-parse", "HEAD")
	if !strings.Contains(rep.Details, "committed it as "+head) {
		t.Errorf("details %q", rep.Details)
	}
	// The same task again (a redelivery) has nothing new to commit.
	if rep, _, err := w.handle(context.Background(), &task{TaskID: "t-20261122-0001", Title: "Add notes"}); err != nil || !strings.Contains(rep.Details, head) {
		t.Errorf("the task done again: %+v, %v", rep, err)
	}
	if got := shoguntest.Git(t, dir, "rev-list", "--count", "HEAD"); got != "2" {
		t.Errorf("%s commits after the task was done twice, want 2", got)
	}
}

func TestCommitWorkMustStayInTheWorkingDirectory(t *testing.T) {
	for _, bad := range []string{"../x.md", "/tmp/x.md", "dir/"} {
		o := Options{CommitWork: bad, Composer: ComposerPlain, Echo: EchoFull, Redraw: RedrawInline}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "must name a file inside the working directory") {
			t.Errorf("CommitWork %q: %v", bad, err)
		}
	}
}
