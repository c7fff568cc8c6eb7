package rolelog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/workspace"
)

// Index passes a role's output on to its log and remembers when the log
// reached which length, so that the output of a moment (a task's time) can
// be found in it later. A role's log holds raw terminal output without
// times; the index is the supervisor's memory of them, from its start on.
//
// Offsets count the bytes written through the index since it was made: the
// log's stream. Its end is the end of the log file now, and rotated files
// precede it (ReadStream).
type Index struct {
	w       io.Writer
	created time.Time
	every   time.Duration // markEvery; tests use less

	mu    sync.Mutex
	total int64
	marks []mark
}

// mark says that at time at, off bytes had been written.
type mark struct {
	at  time.Time
	off int64
}

// Marks are taken at most once per markEvery, when output comes, so the
// output after a mark was written within markEvery of it; when
// maxMarks are held, every other one is dropped (the oldest kept), so a
// long run costs a bounded memory and loses precision, not coverage.
const (
	markEvery = time.Second
	maxMarks  = 8192
)

// NewIndex returns an index writing to w, the role's rotating log.
func NewIndex(w io.Writer) *Index {
	return &Index{w: w, created: time.Now(), every: markEvery}
}

// Write writes p to the log and counts it.
func (x *Index) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now()
	if n := len(x.marks); n == 0 || now.Sub(x.marks[n-1].at) >= x.every {
		if n >= maxMarks {
			x.thin()
		}
		x.marks = append(x.marks, mark{at: now, off: x.total})
	}
	n, err := x.w.Write(p)
	x.total += int64(n)
	return n, err
}

// Close closes the log it writes to, when that can be closed.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if c, ok := x.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (x *Index) thin() {
	kept := x.marks[:0]
	for i, m := range x.marks {
		if i%2 == 0 {
			kept = append(kept, m)
		}
	}
	x.marks = kept
}

// Total is the number of bytes written through the index.
func (x *Index) Total() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.total
}

// Span is the part of the stream written between two times.
type Span struct {
	// Start and End are stream offsets: [Start, End).
	Start, End int64
	// Before says the time asked for began before the index did (before
	// this supervisor started): the output of that earlier part is not in
	// the span.
	Before bool
}

// Span returns where the stream stood at from and at to, each to the
// precision of the marks (a second while output flows): the output written
// between them, and around them by up to that precision.
func (x *Index) Span(from, to time.Time) Span {
	x.mu.Lock()
	defer x.mu.Unlock()
	sp := Span{End: x.total, Before: from.Before(x.created)}
	// The output after the last mark at or before from was written within
	// x.every of that mark: from's if that reaches from, else all before.
	i := sort.Search(len(x.marks), func(i int) bool { return x.marks[i].at.After(from) })
	switch {
	case i > 0 && x.marks[i-1].at.Add(x.every).After(from):
		sp.Start = x.marks[i-1].off
	case i < len(x.marks):
		sp.Start = x.marks[i].off
	default:
		sp.Start = x.total
	}
	// The first mark after to: output before it may be to's.
	j := sort.Search(len(x.marks), func(i int) bool { return x.marks[i].at.After(to) })
	if j < len(x.marks) {
		sp.End = x.marks[j].off
	}
	sp.Start = min(sp.Start, sp.End)
	return sp
}

// Excerpt is bytes read from a log's stream.
type Excerpt struct {
	Data []byte
	// Skipped counts the bytes of the span not in Data: rotated away and
	// deleted, or over the limit asked for (the span's last bytes are
	// kept).
	Skipped int64
}

// ReadStream reads the span [sp.Start, sp.End) of the stream that x indexes
// from the log at path and the rotated files beside it, at most limit bytes
// (the last ones; limit <= 0: all). The files are taken as one stream whose
// end is x.Total() now; the supervisor goes on writing meanwhile, so the
// sizes are read again until they are seen between two equal totals.
func ReadStream(path string, x *Index, sp Span, limit int64) (Excerpt, error) {
	var (
		files []logFile
		total int64
	)
	for try := 0; ; try++ {
		before := x.Total()
		var err error
		if files, err = streamFiles(path); err != nil {
			return Excerpt{}, err
		}
		total = x.Total()
		if total == before || try == 5 {
			break
		}
	}
	var size int64
	for _, f := range files {
		size += f.size
	}
	// Stream offset o is at position size - (total - o) of the files taken
	// end to end.
	from, to := size-(total-sp.Start), size-(total-sp.End)
	ex := Excerpt{}
	if from < 0 {
		ex.Skipped, from = -from, 0
	}
	if to < from {
		to = from
	}
	if limit > 0 && to-from > limit {
		ex.Skipped += to - from - limit
		from = to - limit
	}
	ex.Data = make([]byte, 0, to-from)
	var pos int64
	for _, f := range files {
		lo, hi := max(from, pos), min(to, pos+f.size)
		if lo < hi {
			b, err := readAt(f.path, lo-pos, hi-lo)
			if err != nil {
				return Excerpt{}, err
			}
			ex.Data = append(ex.Data, b...)
		}
		pos += f.size
	}
	return ex, nil
}

type logFile struct {
	path string
	size int64
}

// streamFiles lists the log's rotated files, oldest first, then the log
// itself. Rotated files are named as lumberjack names them:
// <name>-<UTC time as 2006-01-02T15-04-05.000><ext>.
func streamFiles(path string) ([]logFile, error) {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("read log folder: %w", err)
	}
	type backup struct {
		at time.Time
		logFile
	}
	var backups []backup
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ext) {
			continue
		}
		stamp := strings.TrimSuffix(strings.TrimPrefix(name, prefix), ext)
		at, err := time.Parse(backupTimeFormat, stamp)
		if err != nil {
			continue // another role's log ("a-b.log" beside "a.log"), or not a rotation
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		backups = append(backups, backup{at: at, logFile: logFile{path: filepath.Join(dir, name), size: fi.Size()}})
	}
	sort.Slice(backups, func(i, j int) bool { return backups[i].at.Before(backups[j].at) })
	var out []logFile
	for _, b := range backups {
		out = append(out, b.logFile)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// rotated away this moment, or never written
	case err != nil:
		return nil, fmt.Errorf("read log: %w", err)
	default:
		out = append(out, logFile{path: path, size: fi.Size()})
	}
	return out, nil
}

// backupTimeFormat is lumberjack's time in a rotated log's name.
const backupTimeFormat = workspace.RotatedLogTimeFormat

func readAt(path string, off, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	b := make([]byte, n)
	m, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return b[:m], nil
}
