package queue

import (
	"fmt"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// Defaults of Limits, used for its zero fields.
const (
	// DefaultMaxBytes keeps a runaway agent from making the supervisor
	// parse megabytes of YAML; no hand-written command comes near it.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxNodes allows several hundred commands in one file while
	// stopping an alias bomb after a few milliseconds; it is the bound
	// every strict YAML decoder uses, configuration included.
	DefaultMaxNodes = yamlstrict.DefaultMaxNodes
)

// Limits bound what decoding one file may cost. Zero fields take the
// defaults, so Limits{} is the usual choice.
type Limits struct {
	// MaxBytes rejects a larger file before it is parsed (default
	// DefaultMaxBytes).
	MaxBytes int64
	// MaxNodes rejects a document with more YAML nodes than this, counting
	// what every alias points to each time it is used (default
	// DefaultMaxNodes). A few bytes of aliases can stand for billions of
	// nodes; counting stops at the limit, so such a file costs no more
	// than an honest one.
	MaxNodes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	return l
}

// maxBytes is the size limit in force, for callers that read a file
// through an io.LimitReader.
func (l Limits) maxBytes() int64 { return l.withDefaults().MaxBytes }

// CheckSize returns the error the decoders give for a file of size bytes,
// or nil if it is within the limit. A watcher can call it with the size
// from os.Stat so that it never reads a huge file into memory.
func (l Limits) CheckSize(name string, size int64) error {
	l = l.withDefaults()
	if size > l.MaxBytes {
		return &FormatError{File: name, Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit", size, l.MaxBytes)}
	}
	return nil
}
