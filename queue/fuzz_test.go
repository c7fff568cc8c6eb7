package queue

import (
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/textsafe"
)

// The fuzzers check the promise the rest of the queue relies on: whatever
// bytes land in the queue folders, decoding returns, and it returns either
// values that pass Validate or a *FormatError that can go into failed/.
// Seeds are in testdata/fuzz/<FuzzName>/; run with
//
//	go test -run '^$' -fuzz FuzzDecodeCommands -fuzztime 20s ./queue/

func FuzzDecodeCommands(f *testing.F) {
	f.Add([]byte(billionLaughs("to: ashigaru1\ntitle: t\nbody: *i\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.yaml"
		cmds, err := DecodeCommands(name, data, Limits{})
		if err != nil {
			checkFormatError(t, name, err)
			return
		}
		if len(cmds) == 0 {
			t.Fatal("accepted a file with no commands")
		}
		ids := map[string]bool{}
		for i, c := range cmds {
			if err := c.Validate(); err != nil {
				t.Fatalf("accepted command %d does not validate: %v\n%+v", i, err, c)
			}
			if c.ID == "" || c.Priority == "" {
				t.Fatalf("accepted command %d without id or priority: %+v", i, c)
			}
			if ids[c.ID] {
				t.Fatalf("two accepted commands with id %q", c.ID)
			}
			ids[c.ID] = true
		}
		again, err := DecodeCommands(name, data, Limits{})
		if err != nil || !reflect.DeepEqual(again, cmds) {
			t.Fatalf("decoding twice differs: %+v, %v", again, err)
		}
	})
}

func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(billionLaughs("task_id: t1\nstatus: done\nsummary: *i\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.yaml"
		r, err := DecodeReport(name, data, Limits{})
		if err != nil {
			checkFormatError(t, name, err)
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted report does not validate: %v\n%+v", err, r)
		}
	})
}

func checkFormatError(t *testing.T, name string, err error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %T is not a *FormatError: %v", err, err)
	}
	if fe.File != name || fe.Message == "" || fe.Line < 0 || fe.Column < 0 || (fe.Line == 0 && fe.Column != 0) {
		t.Fatalf("malformed FormatError %+v", fe)
	}
	if !strings.HasPrefix(fe.Error(), name+":") {
		t.Fatalf("Error() = %q does not start with the file name", fe.Error())
	}
}

// FuzzCheckFileName checks what the queue relies on before a name found in
// a queue folder becomes part of a claim id, an archived path or a notify
// line: an accepted name holds nothing a terminal would obey and fits; a
// refused one is reported without its raw bytes and gets a safe stand-in
// that is itself accepted.
func FuzzCheckFileName(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string) {
		safe := safeName(name)
		err := checkFileName(name)
		if err == nil {
			if at, r := textsafe.Find(name, nil); at >= 0 {
				t.Fatalf("accepted %q with %s at %d", name, textsafe.Describe(r), at)
			}
			if len(name) > MaxFileNameBytes || strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
				t.Fatalf("accepted %q", name)
			}
			if safe != name {
				t.Fatalf("safeName changed the accepted name %q to %q", name, safe)
			}
		} else {
			checkFormatError(t, safe, err)
			if at, r := textsafe.Find(err.Error(), nil); at >= 0 {
				t.Fatalf("the error for %q holds %s: %q", name, textsafe.Describe(r), err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(name)) {
				t.Fatalf("the error for %q does not quote it: %q", name, err)
			}
			if safe == name {
				t.Fatalf("safeName kept the refused name %q", name)
			}
		}
		if err := checkFileName(safe); err != nil {
			t.Fatalf("the safe name %q of %q is refused: %v", safe, name, err)
		}
		dir := filepath.FromSlash("/ws/runtime/queue/failed")
		if p, err := inFolder(dir, safe); err != nil || filepath.Dir(p) != dir {
			t.Fatalf("the safe name %q leaves its folder: %q, %v", safe, p, err)
		}
		if n := len(claimStamp) + 1 + len(safe) + len(".error.yaml"); n > 255 {
			t.Fatalf("a claim of %q would have a %d-byte name", safe, n)
		}
	})
}
