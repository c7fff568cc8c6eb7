package queue

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
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

// CheckRoles reports whether the roles cmd names are in the configuration:
// To an enabled role, From (when set) any role. The queue refuses a command
// that fails it, so a writer that checks first (`shogun send`, the MCP
// tool send_task) never drops a command bound to land in failed/.
func CheckRoles(cfg *config.Config, cmd Command) error {
	if r, known := cfg.Role(cmd.To); !known {
		return fmt.Errorf("unknown role %q in to (roles: %s)", cmd.To, roleList(cfg))
	} else if !r.Enabled {
		return fmt.Errorf("role %q in to is disabled in config/roles.yaml", cmd.To)
	}
	if cmd.From != "" {
		if _, known := cfg.Role(cmd.From); !known {
			return fmt.Errorf("unknown role %q in from (roles: %s)", cmd.From, roleList(cfg))
		}
	}
	return nil
}

// roleList names the enabled roles, for an error about an unknown one.
func roleList(cfg *config.Config) string { return strings.Join(cfg.EnabledIDs(), ", ") }
