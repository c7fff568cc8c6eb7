package usage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Conversation is a conversation of s's CLI held in s.Workdir, so that it
// can be moved to another config folder (another account) and resumed
// there: its file, and the file's path under s.Home, where the same CLI on
// the other folder looks for it. With id (a session id, checked by the
// caller to be a UUID) it is that session's file; without, the newest of
// the folder, which may be another role's when roles share the folder.
// Claude Code keeps them as projects/<project>/<session>.jsonl; Codex as
// sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl, the folder named in
// its first line (its resume finds the conversation from the rollouts
// alone). ok is false for a CLI whose conversations are not moved; file is
// "" when there is none.
func (s Source) Conversation(id string) (file, rel string, ok bool, err error) {
	if s.Home == "" {
		return "", "", false, nil
	}
	switch s.CLI {
	case CLIClaude:
		dir := filepath.Join(s.Home, "projects", claudeProject(s.Workdir))
		if id == "" {
			file, err = newestFile(dir, ".jsonl")
		} else {
			file, err = regularFile(filepath.Join(dir, id+".jsonl"))
		}
	case CLICodex:
		var files []string
		if files, err = s.Files(time.Time{}); err != nil {
			return "", "", true, err
		}
		for i := len(files) - 1; i >= 0 && file == ""; i-- {
			if id != "" && !strings.HasSuffix(filepath.Base(files[i]), "-"+id+".jsonl") {
				continue
			}
			if codexMine(files[i], s.Workdir) {
				file = files[i]
			}
		}
	default:
		return "", "", false, nil
	}
	if err != nil || file == "" {
		return "", "", true, err
	}
	rel, err = filepath.Rel(s.Home, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", "", true, fmt.Errorf("conversation %s outside %s", file, s.Home)
	}
	return file, rel, true, nil
}

// regularFile is path when it is a regular file, "" when there is none.
func regularFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the conversation: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	return path, nil
}

// newestFile is the most recently changed regular file of dir with the
// suffix; "" when there is none (or no dir).
func newestFile(dir, suffix string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("list conversations: %w", err)
	}
	var best string
	var bestAt time.Time
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if best == "" || fi.ModTime().After(bestAt) {
			best, bestAt = filepath.Join(dir, e.Name()), fi.ModTime()
		}
	}
	return best, nil
}
