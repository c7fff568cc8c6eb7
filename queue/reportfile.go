package queue

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/workspace"
)

// ErrReportWaiting means a role's report file is still there, not yet taken
// by the queue: a second report would replace the first unread.
var ErrReportWaiting = errors.New("a report is already waiting")

// WriteReport writes rep as role's report, runtime/queue/reports/<role>.yaml
// of the workspace ws (the report_to of every task file the role is given),
// the way an agent should: checked first by DecodeReport, the decoder the
// queue reads it with, so a report the queue would reject is an error here
// and never a file in failed/; then written to a hidden temporary file and
// renamed into place. A report still waiting there is not replaced
// (ErrReportWaiting). It returns the path written.
//
// The queue decides whether the report closes its task when it arrives;
// store.CheckReport tells beforehand whether it would.
func WriteReport(ws, role string, rep Report, limits Limits) (string, error) {
	if p := checkRole("role", role); p != nil || role == "" {
		return "", fmt.Errorf("write report: bad role id %q", role)
	}
	if err := rep.Validate(); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	data, err := yaml.Marshal(rep)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	name := role + ".yaml"
	if _, err := DecodeReport(name, data, limits); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	path := workspace.New(ws).ReportFile(role)
	switch _, err := os.Lstat(path); {
	case err == nil:
		return "", fmt.Errorf("write report: %w at %s, not yet taken by the supervisor", ErrReportWaiting, workspace.RelTo(ws, path))
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("write report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	if err := atomicfile.Write(path, data, runtimeFileMode); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return path, nil
}
