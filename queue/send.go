package queue

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
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
		return "", "", refused{fmt.Errorf("send: %w", err)}
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
		return "", "", refused{fmt.Errorf("send: %s already exists", path)}
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
//
// The error names the key it is about (a *fieldError), so that the queue
// can point at its line in the file.
func CheckRoles(cfg *config.Config, cmd Command) error {
	if r, known := cfg.Role(cmd.To); !known {
		return &fieldError{field: "to", msg: fmt.Sprintf("unknown role %q in to (roles: %s)", cmd.To, roleList(cfg))}
	} else if !r.Enabled {
		return &fieldError{field: "to", msg: fmt.Sprintf("role %q in to is disabled in config/roles.yaml", cmd.To)}
	}
	if cmd.From != "" {
		if _, known := cfg.Role(cmd.From); !known {
			return &fieldError{field: "from", msg: fmt.Sprintf("unknown role %q in from (roles: %s)", cmd.From, roleList(cfg))}
		}
	}
	return nil
}

// roleList names the enabled roles, for an error about an unknown one.
func roleList(cfg *config.Config) string { return strings.Join(cfg.EnabledIDs(), ", ") }

// ErrCommandRefused matches (errors.Is) the errors of Send and SendTo that
// refuse the command itself, before anything is written: its shape, a role
// the configuration does not have, an id already used. Other errors are the
// file system's.
var ErrCommandRefused = errors.New("command refused")

// refused is a refusal; its text is the reason alone.
type refused struct{ err error }

func (r refused) Error() string        { return r.err.Error() }
func (r refused) Unwrap() error        { return r.err }
func (r refused) Is(target error) bool { return target == ErrCommandRefused }

// SendTo is Send for a person or a tool handing work to a team configured
// by cfg: `shogun send` and the console's POST /v1/send. Besides the
// command's shape it checks the roles (CheckRoles), so a typo is an error
// now rather than a file in failed/ later. The command is written into
// cfg's workspace.
func SendTo(cfg *config.Config, cmd Command, now time.Time) (id, path string, err error) {
	if err := CheckRoles(cfg, cmd); err != nil {
		return "", "", refused{fmt.Errorf("send: %w", err)}
	}
	return Send(cfg.Workspace, cmd, now)
}
