package queue

import (
	"errors"
	"reflect"
	"strings"
	"testing"
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
