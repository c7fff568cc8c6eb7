package ptyhost

// The pure parts of the Windows backend live here, without a build tag, so
// that they are compiled and tested on every platform: a mistake in quoting or
// in the environment block would otherwise only show on a Windows machine.

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
)

// composeCommandLine builds the command line CreateProcess takes: the program
// followed by its arguments, each quoted so that the Microsoft C runtime (and
// CommandLineToArgvW) splits it back into exactly args.
//
// The program name is parsed by different rules than the arguments: the C
// runtime reads it up to the next quote when it starts with one, and up to the
// next space or tab otherwise, with no backslash escapes. So it is only
// wrapped in quotes, never escaped; a Windows path cannot contain a quote.
func composeCommandLine(path string, args []string) string {
	var b strings.Builder
	if path == "" || strings.ContainsAny(path, " \t") {
		b.WriteByte('"')
		b.WriteString(path)
		b.WriteByte('"')
	} else {
		b.WriteString(path)
	}
	for _, a := range args {
		b.WriteByte(' ')
		appendEscapedArg(&b, a)
	}
	return b.String()
}

// appendEscapedArg writes s quoted as syscall.EscapeArg does on Windows (that
// function does not exist elsewhere): backslashes are literal except in front
// of a quote, where they must be doubled; a quote is preceded by a backslash;
// the whole argument is quoted only if it holds a space or tab or is empty,
// and then trailing backslashes are doubled so that they do not escape the
// closing quote.
func appendEscapedArg(b *strings.Builder, s string) {
	if s == "" {
		b.WriteString(`""`)
		return
	}
	if !strings.ContainsAny(s, "\"\\ \t") {
		b.WriteString(s)
		return
	}
	quote := strings.ContainsAny(s, " \t")
	if quote {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			// The run of backslashes before a quote is doubled, and one more
			// escapes the quote itself.
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, slashes))
		b.WriteByte('"')
	}
}

// environmentBlock builds the environment block CreateProcess takes with
// CREATE_UNICODE_ENVIRONMENT: each "KEY=value" in UTF-16 ending in NUL, then
// one more NUL.
//
// Windows names are case-insensitive, so a later entry replaces an earlier
// one whose name differs only in case (as os/exec does); which spelling the
// child sees is the later one. The block is sorted by name, ignoring case,
// because CreateProcess documents that it must be and some programs rely on
// it. Names may start with '=' ("=C:=C:\work" is how cmd.exe keeps the
// current folder of each drive). An entry without '=' after the name, or
// with a NUL, is an error: it would silently become something else.
func environmentBlock(env []string) ([]uint16, error) {
	type entry struct {
		kv  string
		key []uint16 // upper-cased name in UTF-16, what Windows compares
	}
	entries := make([]entry, 0, len(env))
	index := make(map[string]int, len(env))
	for _, kv := range env {
		name, ok := envName(kv)
		if !ok {
			return nil, fmt.Errorf("environment entry %q is not KEY=value", kv)
		}
		if strings.IndexByte(kv, 0) >= 0 {
			// Only the name: the value may be a secret that must not reach a log.
			return nil, fmt.Errorf("environment variable %q contains a NUL character", name)
		}
		upper := strings.ToUpper(name)
		if i, dup := index[upper]; dup {
			entries[i].kv = kv
			continue
		}
		index[upper] = len(entries)
		entries = append(entries, entry{kv: kv, key: utf16.Encode([]rune(upper))})
	}
	// Windows compares names as upper-cased UTF-16 code units. Comparing the
	// upper case, not the lower case, matters for '_', which sorts between
	// the two ("AB" before "A_B").
	slices.SortStableFunc(entries, func(a, b entry) int { return slices.Compare(a.key, b.key) })

	if len(entries) == 0 {
		// An empty block is still terminated by a NUL after its (empty) list.
		return []uint16{0, 0}, nil
	}
	var block []uint16
	for _, e := range entries {
		block = utf16.AppendRune(append(block, utf16.Encode([]rune(e.kv))...), 0)
	}
	return append(block, 0), nil
}

// envName returns the name of a "KEY=value" entry. The '=' that ends the name
// is looked for after the first character, so that the hidden per-drive
// entries ("=C:=C:\dir") keep their leading '='.
func envName(kv string) (string, bool) {
	if kv == "" {
		return "", false
	}
	i := strings.IndexByte(kv[1:], '=')
	if i < 0 {
		return "", false
	}
	return kv[:i+1], true
}

// withSystemRoot adds SYSTEMROOT=root to env unless env sets it (in any
// case). Without it many Windows programs fail in odd ways (Winsock cannot
// load its providers), which is why os/exec adds it too. env is not modified.
func withSystemRoot(env []string, root string) []string {
	if root == "" {
		return env
	}
	for _, kv := range env {
		if name, ok := envName(kv); ok && strings.EqualFold(name, "SYSTEMROOT") {
			return env
		}
	}
	return append(slices.Clip(env), "SYSTEMROOT="+root)
}

// minConPTYBuild is Windows 10 1809, the first build whose ConPTY works
// (CreatePseudoConsole appeared in 1803 but is unusable there).
const minConPTYBuild = 17763

// checkWindowsBuild reports whether a Windows version (as RtlGetVersion
// gives it, which does not lie to unmanifested programs as GetVersionEx
// does) has a usable ConPTY. Windows 11 still reports itself as 10.0.
func checkWindowsBuild(major, minor, build uint32) error {
	if major > 10 || (major == 10 && (minor > 0 || build >= minConPTYBuild)) {
		return nil
	}
	return fmt.Errorf("ConPTY needs Windows 10 1809 (build %d) or later; this is Windows %d.%d build %d",
		minConPTYBuild, major, minor, build)
}

// consoleCoord converts a terminal size to the X (columns) and Y (rows) of
// the COORD that CreatePseudoConsole and ResizePseudoConsole take. COORD
// holds int16, which checkSize already bounds.
func consoleCoord(cols, rows int) (x, y int16, err error) {
	if err := checkSize(cols, rows); err != nil {
		return 0, 0, err
	}
	return int16(cols), int16(rows), nil
}
