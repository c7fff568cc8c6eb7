package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// recorder appends what the agent received and did to a file, so that a test
// can tell what was really submitted from what merely appeared on the screen,
// and how often a task was really started and reported: the record is how the
// supervisor's tests prove that each task is delivered exactly once.
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

// Kinds of record entries.
const (
	recordSubmit  = "submit"      // Line is what was submitted
	recordNewline = "newline"     // a `\r` in the paste window became a newline; Line is the text before it
	recordTask    = "task"        // Line is the title of a task the agent started
	recordReport  = "report"      // Line is the path of a report the agent wrote
	recordGone    = "report-gone" // Line is the path of a report that was not there when the agent looked again
	recordDialog  = "dialog"      // Dialog names a dialog, Line the option picked
	recordStart   = "start"       // a start with Options.Resumed; Line is "resumed"
)

type recordEntry struct {
	At     string `json:"at"`
	Kind   string `json:"kind"`
	TaskID string `json:"task_id,omitempty"`
	Dialog string `json:"dialog,omitempty"`
	Line   string `json:"line"`
}

// submit records a submitted line with the time its `\r` arrived.
func (r *recorder) submit(at time.Time, line string) error {
	return r.write(recordEntry{At: stamp(at), Kind: recordSubmit, Line: line})
}

// newline records a `\r` taken as a newline because it came within the paste
// window, with the composer's text before it: a submit that did not happen.
func (r *recorder) newline(at time.Time, before string) error {
	return r.write(recordEntry{At: stamp(at), Kind: recordNewline, Line: before})
}

// dialog records the answer a dialog got, with the time its key arrived.
func (r *recorder) dialog(at time.Time, name, label string) error {
	return r.write(recordEntry{At: stamp(at), Kind: recordDialog, Dialog: name, Line: label})
}

// resumed records that the agent started to resume its conversation.
func (r *recorder) resumed() error {
	return r.write(recordEntry{At: stamp(time.Now()), Kind: recordStart, Line: "resumed"})
}

// task records that the agent started working on t, each time it does.
func (r *recorder) task(t *task) error {
	return r.write(recordEntry{At: stamp(time.Now()), Kind: recordTask, TaskID: t.TaskID, Line: t.Title})
}

// report records that the agent wrote the report on taskID to path.
func (r *recorder) report(taskID, path string) error {
	return r.write(recordEntry{At: stamp(time.Now()), Kind: recordReport, TaskID: taskID, Line: path})
}

// gone records that the report on taskID was not at path when the agent
// looked at it again.
func (r *recorder) gone(taskID, path string) error {
	return r.write(recordEntry{At: stamp(time.Now()), Kind: recordGone, TaskID: taskID, Line: path})
}

func (r *recorder) write(e recordEntry) error {
	if r.f == nil {
		return nil
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// One write per entry, so a reader never sees half a line.
	_, err = r.f.Write(append(data, '\n'))
	return err
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (r *recorder) close() {
	if r.f != nil {
		r.f.Close()
	}
}
