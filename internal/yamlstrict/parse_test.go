package yamlstrict

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"

	"gopkg.in/yaml.v3"
)

// aliasBomb nests width aliases to the level below, levels deep:
// width^levels scalars once expanded, from a few hundred bytes. top is
// appended, to use the last level ("top: *l8").
func aliasBomb(levels, width int, top string) string {
	var b strings.Builder
	items := strings.TrimSuffix(strings.Repeat("lol, ", width), ", ")
	for i := range levels {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, items)
		items = strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i), width), ", ")
	}
	return b.String() + top
}

func utf16LE(s string) string {
	var buf bytes.Buffer
	buf.Write([]byte{0xff, 0xfe})
	_ = binary.Write(&buf, binary.LittleEndian, utf16.Encode([]rune(s)))
	return buf.String()
}

const bombMessage = "document has more than 10000 YAML nodes once aliases are expanded (an alias bomb?)"

func TestParseRefusesBadDocuments(t *testing.T) {
	tests := []struct {
		name, in string
		maxNodes int
		want     string // Error(): "line:col: message"
	}{
		{name: "empty", in: "", want: "file is empty"},
		{name: "only comments", in: "# nothing yet\n\n", want: "file is empty"},
		{name: "only a separator", in: "---\n", want: "file is empty"},
		{name: "only null documents", in: "--- ~\n--- null\n", want: "file is empty"},
		{name: "two documents", in: "a: 1\nb: 2\n---\nc: 3\n", want: "3:1: only one YAML document is allowed, found a second one"},
		{name: "a second document after a null one", in: "---\n---\na: 1\n---\nb: 2\n", want: "4:1: only one YAML document is allowed, found a second one"},
		{name: "syntax error, line only", in: "a: 1\nb: [\n", want: "2: invalid YAML: did not find expected node content"},
		{name: "bad indentation", in: "a: 1\n  b: 2\n", want: "2: invalid YAML: mapping values are not allowed in this context"},
		{name: "a key at a list's indentation points at the key, not the list's key",
			in:   "roles:\n  - id: a\n    name: x\n  - id: b\n  name: y\n",
			want: "5:3: invalid YAML: did not find expected '-' indicator in the block that starts on line 1 (check the indentation of line 5)"},
		{name: "a key between two levels points at the key",
			in:   "roles:\n  - id: a\n    command:\n      exec: x\n      args: []\n     cwd: .\n",
			want: "6:6: invalid YAML: did not find expected key in the block that starts on line 1 (check the indentation of line 6)"},
		{name: "a key one column left of its siblings points at the key",
			in:   "# top\nroles:\n  - id: a\n    stop: |\n      /exit\n   text\n",
			want: "6:4: invalid YAML: did not find expected '-' indicator in the block that starts on line 2 (check the indentation of line 6)"},
		{name: "syntax error in the second document", in: "a: 1\n---\nb: [\n", want: "3: invalid YAML: did not find expected node content"},
		{name: "raw control byte located", in: "a: 1\nb: x\x07y\n", want: "2:5: invalid YAML: control characters are not allowed"},
		{name: "DEL located", in: "k: \x7f\n", want: "1:4: invalid YAML: control characters are not allowed"},
		{name: "C1 control located, NEL allowed", in: "k: \u0085x\u009b\n", want: "1:6: invalid YAML: control characters are not allowed"},
		{name: "invalid UTF-8 located", in: "a: 1\nb: caf\xe9\nc: 2\n", want: "2:7: invalid YAML: invalid trailing UTF-8 octet"},
		{name: "truncated UTF-8 located", in: "#\n - - QI\xd7", want: "2:8: invalid YAML: incomplete UTF-8 octet sequence"},
		{name: "a bad byte in UTF-16 is not located", in: utf16LE("a: b\x07\n"), want: "invalid YAML: control characters are not allowed"},
		{name: "unknown anchor", in: "a: *nope\n", want: "invalid YAML: unknown anchor 'nope' referenced"},
		{name: "alias bomb", in: aliasBomb(9, 9, "top: *l8\n"), want: bombMessage},
		{name: "alias bomb in a document before an empty one", in: aliasBomb(9, 9, "top: *l8\n") + "---\n", want: bombMessage},
		{name: "a list of itself", in: "&a [*a]\n", want: bombMessage},
		{name: "a mapping that merges itself", in: "&a {k: v, <<: *a}\n", want: bombMessage},
		{name: "node limit counts every node", in: "[a, b, c]\n", maxNodes: 3, want: "document has more than 3 YAML nodes once aliases are expanded (an alias bomb?)"},
		{name: "node limit counts each use of an alias", in: "a: &x [1, 2]\nb: *x\n", maxNodes: 8, want: "document has more than 8 YAML nodes once aliases are expanded (an alias bomb?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := Parse([]byte(tt.in), tt.maxNodes)
			if err == nil {
				t.Fatalf("accepted a %s, want %s", Describe(root), tt.want)
			}
			if root != nil {
				t.Errorf("returned a root with the error %v", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestParseAcceptsGoodDocuments(t *testing.T) {
	tests := []struct {
		name, in string
		maxNodes int
		want     string // Describe of the root
	}{
		{name: "a mapping", in: "a: 1\n", want: "a mapping"},
		{name: "a list", in: "- 1\n", want: "a list"},
		{name: "a scalar", in: "hello\n", want: `string "hello"`},
		{name: "separators at the top and bottom", in: "---\na: 1\n---\n", want: "a mapping"},
		{name: "an empty document first", in: "---\n---\na: 1\n", want: "a mapping"},
		{name: "a byte order mark and CRLF", in: "\ufeffa: 1\r\nb: 2\r\n", want: "a mapping"},
		{name: "UTF-16", in: utf16LE("a: 1\n"), want: "a mapping"},
		{name: "an anchored root", in: "&top {a: 1}\n", want: "a mapping"},
		{name: "exactly the node limit", in: "[a, b, c]\n", maxNodes: 4, want: "a list"},
		{name: "aliases within the default limit", in: "a: &x [1, 2]\nb: *x\nc: *x\n", want: "a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := Parse([]byte(tt.in), tt.maxNodes)
			if err != nil {
				t.Fatal(err)
			}
			if root.Kind == yaml.AliasNode || IsNull(root) {
				t.Errorf("root is %v", root.Kind)
			}
			if got := Describe(root); got != tt.want {
				t.Errorf("root is %s, want %s", got, tt.want)
			}
		})
	}
}

// Bounded by memory, not by time: a timed assertion fails on a loaded
// machine, while an expansion shows up as gigabytes allocated.
func TestParseRefusesAliasBombsCheaply(t *testing.T) {
	for name, in := range map[string]string{
		"billion laughs": aliasBomb(9, 9, "top: *l8\n"),
		"self-reference": "&a [" + strings.Repeat("*a,", 50000) + "*a]\n",
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Parse([]byte(in), 0)
			runtime.ReadMemStats(&after)
			if err == nil || err.Message != bombMessage {
				t.Fatalf("err = %v, want %s", err, bombMessage)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB to refuse", alloc>>20)
			}
		})
	}
}

// panickingReader hands yaml.v3 the start of a document, then panics from
// inside the parser's read, the way a bug deep in yaml.v3 would: yaml.v3
// recovers only its own error type and lets everything else through.
type panickingReader struct{ sent bool }

func (r *panickingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, "a: 1\nb: "), nil
	}
	panic("index out of range [7] with length 7")
}

func TestParseRecoversFromParserPanics(t *testing.T) {
	root, err := parse(&panickingReader{}, []byte("a: 1\nb: "), 0)
	if root != nil || err == nil {
		t.Fatalf("root %v, err %v: want an error", root, err)
	}
	const want = "invalid YAML: parser failed: index out of range [7] with length 7"
	if err.Error() != want {
		t.Errorf("error\n got: %s\nwant: %s", err, want)
	}
}

// The reader test above relies on yaml.v3 letting a foreign panic through;
// this checks that it still does, so that the test keeps proving something
// if yaml.v3 changes.
func TestYAMLLetsForeignPanicsThrough(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("yaml.v3 swallowed the panic: TestParseRecoversFromParserPanics no longer tests recovery")
		}
	}()
	var doc yaml.Node
	_ = yaml.NewDecoder(&panickingReader{}).Decode(&doc)
}

func TestErrorLeavesOutUnknownPositions(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{Line: 3, Column: 7, Message: "m"}, "3:7: m"},
		{Error{Line: 3, Message: "m"}, "3: m"},
		{Error{Message: "m"}, "m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.e, got, tt.want)
		}
	}
}
