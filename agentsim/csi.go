package agentsim

import (
	"strconv"
	"strings"
)

// splitCSI cuts the agent's output into text and control sequences, for a
// console that does not interpret escape sequences itself (consoleOutput on
// Windows). It calls text for each run of text and csi for each control
// sequence ESC [ params final; any other escape sequence is dropped. It
// returns the start of a sequence cut short by the end of b, which belongs
// before the next write.
func splitCSI(b []byte, text func([]byte), csi func(params string, final byte)) (rest []byte) {
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != 0x1b {
			i++
		}
		if i > 0 {
			text(b[:i])
			b = b[i:]
			continue
		}
		// b starts with ESC.
		if len(b) < 2 {
			return b
		}
		if b[1] != '[' {
			b = b[2:] // ESC and the byte it introduces: no console counterpart
			continue
		}
		j := 2
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f { // parameters and intermediates
			j++
		}
		if j == len(b) {
			return b
		}
		if b[j] >= 0x40 && b[j] <= 0x7e {
			csi(string(b[2:j]), b[j])
		}
		b = b[j+1:]
	}
	return nil
}

// csiArg is the n-th (from 0) numeric parameter of a control sequence, or
// def when it is missing or 0, as ECMA-48 reads them.
func csiArg(params string, n, def int) int {
	fields := strings.Split(params, ";")
	if n >= len(fields) {
		return def
	}
	v, err := strconv.Atoi(fields[n])
	if err != nil || v <= 0 {
		return def
	}
	return v
}
