package queue

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// billionLaughs is the classic alias bomb: nine levels of nine aliases,
// 9^9 (387 million) strings once expanded, in well under a kilobyte.
func billionLaughs(top string) string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for c := 'b'; c <= 'i'; c++ {
		p := string(c - 1)
		fmt.Fprintf(&b, "%c: &%c [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", c, c, p, p, p, p, p, p, p, p, p)
	}
	b.WriteString(top)
	return b.String()
}

// Bounded by memory, not by time: a timed assertion fails on a loaded
// machine, while an expansion shows up as gigabytes allocated.
func TestAliasBombIsRejectedCheaply(t *testing.T) {
	// Three shapes: nine levels of nine (the classic), an anchor holding a
	// long list of aliases to itself (pushes many nodes per step), and the
	// bomb hidden inside a field the decoder would otherwise read.
	selfWide := "&a [" + strings.Repeat("*a,", 50000) + "*a]\n"
	for name, in := range map[string]string{
		"billion laughs": billionLaughs("to: ashigaru1\n"),
		"self-reference": selfWide,
		"inside tags":    billionLaughs("tags: *i\nto: a\ntitle: t\nbody: x\n"),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := DecodeCommands("bomb.yaml", []byte(in), Limits{})
			runtime.ReadMemStats(&after)
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(fe.Message, "alias bomb") {
				t.Fatalf("err = %v, want an alias bomb error", err)
			}
			// The parse tree of the input plus at most MaxNodes stack
			// entries; an expansion would be gigabytes.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB to reject", alloc>>20)
			}
		})
	}
}

func TestNodeLimitIsConfigurable(t *testing.T) {
	in := "to: a\ntitle: t\nbody: x\ntags: [a, b, c, d, e, f, g, h]\n"
	if _, err := DecodeCommands("c.yaml", []byte(in), Limits{MaxNodes: 10}); err == nil ||
		err.Error() != "c.yaml: document has more than 10 YAML nodes once aliases are expanded (an alias bomb?)" {
		t.Errorf("MaxNodes 10: err = %v", err)
	}
	if _, err := DecodeCommands("c.yaml", []byte(in), Limits{MaxNodes: 20}); err != nil {
		t.Errorf("MaxNodes 20: %v", err)
	}
	if _, err := DecodeCommands("c.yaml", []byte(in), Limits{MaxBytes: 10}); err == nil ||
		err.Error() != fmt.Sprintf("c.yaml: file is %d bytes, over the 10-byte limit", len(in)) {
		t.Errorf("MaxBytes 10: err = %v", err)
	}
}

func TestCheckSizeMatchesTheDecoders(t *testing.T) {
	err := Limits{}.CheckSize("big.yaml", 2<<20)
	if err == nil || err.Error() != "big.yaml: file is 2097152 bytes, over the 1048576-byte limit" {
		t.Errorf("CheckSize = %v", err)
	}
	if err := (Limits{}).CheckSize("ok.yaml", 1<<20); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
}
