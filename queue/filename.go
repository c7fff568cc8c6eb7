package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/textsafe"
)

// MaxFileNameBytes is the longest name, in bytes, of a file shogun takes
// from the queue folders. The name becomes part of a claim id and of a
// command's archived path (a report is archived under its task's id, see
// reportArchiveName, as its path is typed into an agent); with the claim's
// timestamp in front it must stay under the 255 bytes file systems allow.
const MaxFileNameBytes = 200

// checkFileName checks a name found in a queue folder the way ids are
// checked, before it becomes part of anything: no control characters
// (textsafe.IsControl), valid UTF-8, no path separator (a backslash is one
// on Windows, and makes a name read as a path elsewhere), at most
// MaxFileNameBytes. The error quotes the name escaped, never raw.
func checkFileName(name string) error {
	msg := ""
	if at, r := textsafe.Find(name, nil); at >= 0 {
		msg = fmt.Sprintf("has %s at byte %d", textsafe.Describe(r), at+1)
	} else if len(name) > MaxFileNameBytes {
		msg = fmt.Sprintf("is %d bytes long, over the %d-byte limit", len(name), MaxFileNameBytes)
	} else if strings.ContainsAny(name, `/\`) {
		msg = `has a path separator (/ or \)`
	} else if name == "" || name == "." || name == ".." {
		msg = "is not a file name"
	}
	if msg == "" {
		return nil
	}
	return &FormatError{File: safeName(name), Message: fmt.Sprintf(
		"the file name %s %s; queue file names must be at most %d bytes of printable UTF-8, so the file was not read",
		strconv.Quote(name), msg, MaxFileNameBytes)}
}

// safeName is name if checkFileName accepts it, else a name made from its
// hash that any file system takes: the same unsafe name always gives the
// same safe one, and the original is kept, escaped, in the error record.
func safeName(name string) string {
	if at, _ := textsafe.Find(name, nil); at < 0 && len(name) <= MaxFileNameBytes &&
		!strings.ContainsAny(name, `/\`) && name != "" && name != "." && name != ".." {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	ext := ".yaml"
	if strings.EqualFold(filepath.Ext(name), ".yml") {
		ext = ".yml"
	}
	return "unsafe-name-" + hex.EncodeToString(sum[:8]) + ext
}

// fileKind names what a non-regular file is, for the error that rejects it.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// notRegular is the error for a queue entry that is not a regular file.
// Such an entry is never opened: a symbolic link would read a file from
// anywhere (and put its first bytes in an error message), a FIFO would
// block the queue.
func notRegular(name string, m fs.FileMode) *FormatError {
	return &FormatError{File: name, Message: fmt.Sprintf(
		"%s is %s, not a regular file; queue files must be regular files, so it was not opened", name, fileKind(m))}
}

// inFolder joins dir and name, refusing a name that would leave dir: the
// name of every archived or rejected file passes here.
func inFolder(dir, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !utf8.ValidString(name) {
		return "", fmt.Errorf("queue: %q is not a file name inside %s", name, dir)
	}
	p := filepath.Join(dir, name)
	if filepath.Dir(p) != filepath.Clean(dir) {
		return "", fmt.Errorf("queue: %q is not a file name inside %s", name, dir)
	}
	return p, nil
}

// moveInto renames src into dir as name, never over an existing file: if
// name is taken, "-2", "-3"… goes before its extension. It returns the path
// the file now has. Only the supervisor writes into these folders, so
// looking first and renaming after is enough. dir is made if missing (an
// archive day's folder comes with the day's first file).
func moveInto(src, dir, name string) (string, error) {
	dst, err := freeName(dir, name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Rename(src, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// maxSuffix bounds the search for a free archive name.
const maxSuffix = 10000
