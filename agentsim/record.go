package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// recorder appends what the agent received to a file, so that a test can tell
// what was really submitted from what merely appeared on the screen.
type recorder struct {
	f *os.File // nil: recording is off
}

func openRecorder(path string) (*recorder, error) {
	if path == "" {
		return &recorder{}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("agent-sim: open record file: %w", err)
	}
	return &recorder{f: f}, nil
}

type recordEntry struct {
	At   string `json:"at"`
	Line string `json:"line"`
	Kind string `json:"kind"`
}

// submit records a submitted line with the time its `\r` arrived.
func (r *recorder) submit(at time.Time, line string) error {
	if r.f == nil {
		return nil
	}
	data, err := json.Marshal(recordEntry{At: at.UTC().Format(time.RFC3339Nano), Line: line, Kind: "submit"})
	if err != nil {
		return err
	}
	// One write per entry, so a reader never sees half a line.
	_, err = r.f.Write(append(data, '\n'))
	return err
}

func (r *recorder) close() {
	if r.f != nil {
		r.f.Close()
	}
}
