package queue

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// command's shape it checks that To names an enabled role of cfg and From,
// when set, a configured one, so a typo is an error now rather than a file
// in failed/ later. The command is written into cfg's workspace.
func SendTo(cfg *config.Config, cmd Command, now time.Time) (id, path string, err error) {
	for _, f := range []struct{ key, id string }{{"to", cmd.To}, {"from", cmd.From}} {
		if f.id == "" {
			continue
		}
		r, ok := cfg.Role(f.id)
		if !ok {
			return "", "", refused{fmt.Errorf("send: %s %s: no such role in config/roles.yaml", f.key, f.id)}
		}
		if f.key == "to" && !r.Enabled {
			return "", "", refused{fmt.Errorf("send: to %s: the role is disabled in config/roles.yaml", f.id)}
		}
	}
	return Send(cfg.Workspace, cmd, now)
}
