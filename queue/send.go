package queue

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/workspace"
)

// Send writes cmd into the workspace's commands folder the way every writer
// should: a hidden temporary file renamed into place, so the queue never
// sees half a command. A command without an id gets a fresh one. It returns
// the id and the path written.
func Send(ws string, cmd Command, now time.Time) (id, path string, err error) {
	if cmd.ID == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", "", fmt.Errorf("send: %w", err)
		}
		cmd.ID = "cmd-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
	}
	if err := cmd.Validate(); err != nil {
		return "", "", fmt.Errorf("send: %w", err)
	}
	data, err := yaml.Marshal(cmd)
	if err != nil {
		return "", "", fmt.Errorf("send: %w", err)
	}
	dir := workspace.New(ws).Commands()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("send: %w", err)
	}
	path = filepath.Join(dir, cmd.ID+".yaml")
	if _, err := os.Stat(path); err == nil {
		return "", "", fmt.Errorf("send: %s already exists", path)
	}
	if err := atomicfile.Write(path, data, runtimeFileMode); err != nil {
		return "", "", fmt.Errorf("send: %w", err)
	}
	return cmd.ID, path, nil
}
