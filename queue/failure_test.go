package queue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteFailureRecordsWhyAFileWasRejected(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 22, 10, 15, 30, 999_000_000, time.UTC)
	_, cause := DecodeCommands("login.yaml", []byte("to: ashigaru1\ntitle: [a, b]\nbody: x\n"), Limits{})

	path, err := WriteFailure(dir, "login.yaml", cause, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "login.yaml.error.yaml"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const want = `error: '"title" must be a string, got a list'
line: 2
column: 8
at: 2026-11-22T10:15:30Z
file: login.yaml
`
	if string(data) != want {
		t.Errorf("file:\n%s\nwant:\n%s", data, want)
	}
	rec, err := ReadFailure(path)
	if err != nil {
		t.Fatal(err)
	}
	wantRec := FailureRecord{Error: `"title" must be a string, got a list`, Line: 2, Column: 8,
		At: time.Date(2026, 11, 22, 10, 15, 30, 0, time.UTC), File: "login.yaml"}
	if rec != wantRec {
		t.Errorf("read back %+v, want %+v", rec, wantRec)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind %v, want only the record", entries)
	}
}

func TestWriteFailureCauses(t *testing.T) {
	at := time.Date(2026, 11, 22, 19, 0, 0, 0, time.FixedZone("JST", 9*3600))
	fe := &FormatError{File: "x.yaml", Line: 4, Column: 2, Message: "unknown key \"to\"\nsecond line: with a colon"}
	for _, tt := range []struct {
		name      string
		cause     error
		want      string
		line, col int
	}{
		{"format error", fe, fe.Message, 4, 2},
		{"wrapped format error", fmt.Errorf("claim: %w", fe), "claim: x.yaml:4:2: " + fe.Message, 4, 2},
		{"other error", errors.New(`unknown role "ashigaru9" in to`), `unknown role "ashigaru9" in to`, 0, 0},
		{"no position", &FormatError{File: "x.yaml", Message: "file is empty"}, "file is empty", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, err := WriteFailure(dir, "runtime/queue/commands/x.yaml", tt.cause, at)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(path) != "x.yaml.error.yaml" {
				t.Errorf("path = %s", path)
			}
			rec, err := ReadFailure(path)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Error != tt.want || rec.Line != tt.line || rec.Column != tt.col ||
				!rec.At.Equal(at) || rec.File != "runtime/queue/commands/x.yaml" {
				t.Errorf("got %+v", rec)
			}
		})
	}
}

func TestWriteFailureReplacesAnOlderRecord(t *testing.T) {
	dir := t.TempDir()
	at := time.Now()
	if _, err := WriteFailure(dir, "a.yaml", errors.New("first"), at); err != nil {
		t.Fatal(err)
	}
	path, err := WriteFailure(dir, "a.yaml", errors.New("second"), at)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadFailure(path)
	if err != nil || rec.Error != "second" {
		t.Errorf("rec = %+v, %v", rec, err)
	}
}

func TestWriteFailureErrors(t *testing.T) {
	if _, err := WriteFailure(filepath.Join(t.TempDir(), "missing"), "a.yaml", errors.New("x"), time.Now()); err == nil {
		t.Error("wrote into a folder that does not exist")
	}
	if _, err := WriteFailure(t.TempDir(), "commands/", errors.New("x"), time.Now()); err == nil {
		t.Error("accepted a name without a base")
	}
}

func TestReadFailureIsStrict(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.error.yaml")
	if err := os.WriteFile(path, []byte("error: e\nline: 1\ncolumn: 1\nat: 2026-11-22T10:15:00Z\nfile: x\nextra: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFailure(path); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("err = %v, want one naming the unknown key", err)
	}
	if _, err := ReadFailure(filepath.Join(dir, "none.yaml")); err == nil {
		t.Error("read a file that does not exist")
	}
}
