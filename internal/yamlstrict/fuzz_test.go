package yamlstrict

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParse checks the promise both decoders rely on: whatever the bytes,
// Parse returns, either a root that is neither an alias nor null or an
// error with a sane position, and Fields and Describe on that root return
// too. The queue's fuzzers (queue/fuzz_test.go) drive the same code through
// the command and report formats; run this one with
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 20s ./internal/yamlstrict/
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"a: 1\n", "", "---\n", "a: 1\n---\nb: 2\n", "a: [\n", "a: x\x07\n", "b: caf\xe9\n",
		"&a [*a]\n", "&a {<<: *a}\n", "a: &k x\n*k : y\n", "<<: [1, {a: 2}]\n",
		"roles:\n  - id: a\n   name: b\n", "a:\n  b:\n    c: |\n      x\n   d: 1\n",
		aliasBomb(9, 9, "top: *l8\n"), mergeChain(MaxMergeDepth + 1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := Parse(data, 0)
		if err != nil {
			if root != nil {
				t.Fatalf("a root with the error %v", err)
			}
			if err.Message == "" || err.Line < 0 || err.Column < 0 || err.Line == 0 && err.Column != 0 {
				t.Fatalf("malformed error %+v", err)
			}
			return
		}
		if root == nil || root.Kind == yaml.AliasNode || IsNull(root) {
			t.Fatalf("root %+v", root)
		}
		_ = Describe(root)
		if root.Kind != yaml.MappingNode {
			return
		}
		fields, problems := Fields(root)
		for _, p := range problems {
			if p.Message == "" || p.Line <= 0 || p.Column <= 0 {
				t.Fatalf("problem without a place: %+v", p)
			}
		}
		for _, fl := range fields {
			if fl.Key == nil || fl.Value == nil || fl.Value.Kind == yaml.AliasNode && fl.Value.Alias != nil {
				t.Fatalf("field %+v", fl)
			}
		}
	})
}
