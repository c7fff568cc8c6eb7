package queue

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/textsafe"
)

// FailureRecord is the <name>.error.yaml that sits beside a rejected file in
// runtime/queue/failed/. It is for whoever wrote the file, person or agent:
// it says what was wrong and where without their having to read the
// supervisor's log.
type FailureRecord struct {
	// Error says what is wrong; for a *FormatError without the location,
	// which Line and Column carry.
	Error string `yaml:"error"`
	// Line and Column are 1-based, 0 when unknown.
	Line   int       `yaml:"line"`
	Column int       `yaml:"column"`
	At     time.Time `yaml:"at"`
	// File is the name of the rejected file as WriteFailure was given it.
	File string `yaml:"file"`
	// OriginalName is set when the file was dropped under a name that was
	// not safe to keep (control characters, invalid UTF-8, too long): that
	// name, quoted and escaped as a Go string literal (strconv.Quote), while
	// the file is in failed/ under File.
	OriginalName string `yaml:"original_name,omitempty"`
}

// WriteFailure records why the file name was rejected, in
// <failedDir>/<base of name>.error.yaml, and returns that path. It writes a
// hidden temporary file and renames it, so a reader (or a crash) never sees
// half a record; an older record for the same name is replaced. When cause
// is or wraps a *FormatError, its line and column go into the record. The
// time is kept to the second, as RFC 3339.
//
// The record is created readable by its owner only, like everything the
// supervisor writes under runtime/. An error message holding control
// characters (quoted from a file) is escaped.
func WriteFailure(failedDir, name string, cause error, at time.Time) (errorFile string, err error) {
	return writeFailure(failedDir, name, "", cause, at)
}

// writeFailure is WriteFailure with the escaped original name of a file
// renamed for safety.
func writeFailure(failedDir, name, original string, cause error, at time.Time) (errorFile string, err error) {
	base := name
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if base == "" || base == "." || base == ".." {
		return "", fmt.Errorf("queue: write failure record: bad file name %q", name)
	}
	rec := FailureRecord{File: name, At: at.Truncate(time.Second), OriginalName: original}
	if cause != nil {
		rec.Error = cause.Error()
	}
	var fe *FormatError
	if errors.As(cause, &fe) {
		rec.Line, rec.Column = fe.Line, fe.Column
		if cause == error(fe) {
			rec.Error = fe.Message // the location is in its own fields
		}
	}
	if at, _ := textsafe.Find(rec.Error, func(r rune) bool { return r == '\n' || r == '\t' }); at >= 0 {
		rec.Error = textsafe.Escape(rec.Error)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(rec); err != nil {
		return "", fmt.Errorf("queue: encode failure record for %s: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("queue: encode failure record for %s: %w", name, err)
	}

	errorFile = filepath.Join(failedDir, base+".error.yaml")
	// Owner-only, as everything under runtime/: a record may quote the
	// rejected file, which other users must not read through it.
	if err := atomicfile.Write(errorFile, buf.Bytes(), runtimeFileMode); err != nil {
		return "", fmt.Errorf("queue: write failure record: %w", err)
	}
	return errorFile, nil
}

// ReadFailure reads a record written by WriteFailure, strictly: a record
// with unknown keys was not written by shogun.
func ReadFailure(path string) (FailureRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return FailureRecord{}, fmt.Errorf("queue: read failure record: %w", err)
	}
	var rec FailureRecord
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&rec); err != nil {
		return FailureRecord{}, fmt.Errorf("queue: read failure record %s: %w", path, err)
	}
	return rec, nil
}
