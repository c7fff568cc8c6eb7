package usage

import "path/filepath"

// SessionFolder is the folder in which s's CLI keeps the conversations
// held in s.Workdir, one file each, so that a conversation can be moved to
// another config folder (another account) and resumed there: Claude Code's
// projects/<project>/ (its --continue resumes the newest file of it). ok is
// false for a CLI whose conversations are not kept by folder.
func (s Source) SessionFolder() (string, bool) {
	if s.CLI != CLIClaude || s.Home == "" {
		return "", false
	}
	return filepath.Join(s.Home, "projects", claudeProject(s.Workdir)), true
}
