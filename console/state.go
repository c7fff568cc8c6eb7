package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// State is what a workspace's supervisor made of its web console, in
// runtime/state/ui.json (workspace.Layout.UIState): where it listens, or why
// it does not. `shogun start` writes it once the console has started or
// failed; `shogun ui` and the demo read it, so that they find a console on
// the port it took when ui.port was in use, and can say why there is none.
type State struct {
	// Running is true when the console listens at URL.
	Running bool `json:"running"`
	// URL is the console's address without any login: http://localhost:5173/.
	URL string `json:"url,omitempty"`
	// Host and Port are where it listens: ui.host, and ui.port or the free
	// port it took.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// TakenPort is the configured ui.port when another program had it.
	TakenPort int `json:"taken_port,omitempty"`
	// Reason says why the console does not run: "ui.enabled: false in
	// config/settings.yaml", or the error it could not start with.
	Reason string `json:"reason,omitempty"`
	// Pid is the supervisor's process id.
	Pid int `json:"pid"`
}

// RunningState is the state of a console that listens.
func RunningState(c *Console) State {
	ui := c.UI()
	return State{Running: true, URL: Address(ui), Host: ui.Host, Port: ui.Port, TakenPort: c.TakenPort(), Pid: os.Getpid()}
}

// StoppedState is the state of a console that does not run, and why.
func StoppedState(reason string) State {
	return State{Reason: reason, Pid: os.Getpid()}
}

// WriteState records s for the workspace ws, readable by its owner only.
func WriteState(ws string, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("console state: %w", err)
	}
	path := workspace.New(ws).UIState()
	if err := os.MkdirAll(workspace.New(ws).State(), 0o700); err != nil {
		return fmt.Errorf("console state: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("console state: %w", err)
	}
	return nil
}

// ReadState reads what the last start of ws recorded of its console; ok is
// false when it recorded nothing (a supervisor older than this file).
func ReadState(ws string) (s State, ok bool, err error) {
	b, err := os.ReadFile(workspace.New(ws).UIState())
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("read the console's state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, false, fmt.Errorf("read the console's state %s: %w", workspace.New(ws).UIState(), err)
	}
	return s, true, nil
}

// On is ui with the port the console of s listens on. The host stays the
// configured one: the token goes to no other host, whatever the file says.
func (s State) On(ui config.UISettings) config.UISettings {
	if s.Running && s.Port > 0 && s.Port <= 65535 {
		ui.Port = s.Port
	}
	return ui
}
