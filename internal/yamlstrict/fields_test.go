package yamlstrict

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// mergeChain is a document whose top mapping merges a chain of depth
// mappings, each merging the next: depth levels of "<<" below the top.
func mergeChain(depth int) string {
	var b strings.Builder
	b.WriteString("defs:\n")
	fmt.Fprintf(&b, "  - &m%d {k%d: %d}\n", depth, depth, depth)
	for i := depth - 1; i >= 1; i-- {
		fmt.Fprintf(&b, "  - &m%d {k%d: %d, <<: *m%d}\n", i, i, i, i+1)
	}
	b.WriteString("top:\n  <<: *m1\n  own: 0\n")
	return b.String()
}

func TestFields(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		key      string   // decode the value of this top-level key; "" for the root
		fields   []string // "name=value" in order; value is Describe's for non-scalars
		problems []string // Error() of each, in order
	}{
		{
			name:   "keys in document order",
			in:     "b: 1\na: 2\nc:\n",
			fields: []string{"b=1", "a=2", "c="},
		},
		{
			name: "a merged mapping adds keys after the own ones and never overrides them",
			in:   "base: &b {x: 1, y: 2}\nitem:\n  y: 3\n  <<: *b\n  z: 4\n",
			key:  "item", fields: []string{"y=3", "z=4", "x=1"},
		},
		{
			name: "in a merged list the earlier mapping wins",
			in:   "a: &a {k: a, only_a: 1}\nb: &b {k: b, only_b: 2}\nitem: {<<: [*a, *b]}\n",
			key:  "item", fields: []string{"k=a", "only_a=1", "only_b=2"},
		},
		{
			name: "merges of merges",
			in:   "a: &a {deep: 1}\nb: &b {<<: *a, mid: 2}\nitem: {<<: *b, top: 3}\n",
			key:  "item", fields: []string{"top=3", "mid=2", "deep=1"},
		},
		{
			name:   "values are resolved, keys keep their place",
			in:     "a: &v [1, 2]\nb: *v\n",
			fields: []string{"a=a list", "b=a list"},
		},
		{
			name:     "a duplicate key: the first counts",
			in:       "a: 1\nb: 2\na: 3\n",
			fields:   []string{"a=1", "b=2"},
			problems: []string{`3:1: duplicate key "a" (first at line 1)`},
		},
		{
			name:     "a duplicate inside a merged mapping is found where it is written",
			in:       "base: &b\n  x: 1\n  x: 2\nitem: {<<: *b}\n",
			key:      "item",
			fields:   []string{"x=1"},
			problems: []string{`3:3: duplicate key "x" (first at line 2)`},
		},
		{
			name:     "a key merged in and written out is not a duplicate",
			in:       "base: &b {x: 1}\nitem: {<<: *b, x: 2}\n",
			key:      "item",
			fields:   []string{"x=2"},
			problems: nil,
		},
		{
			name:     "keys that are not strings",
			in:       "[a]: 1\n{b: c}: 2\nok: 3\n",
			fields:   []string{"ok=3"},
			problems: []string{"1:1: keys must be strings, got a list", "2:1: keys must be strings, got a mapping"},
		},
		{
			name:     "a key given by an alias is located where the alias is",
			in:       "a: &k name\n*k : 1\nname: 2\n",
			fields:   []string{"a=name", "name=1"},
			problems: []string{`3:1: duplicate key "name" (first at line 2)`},
		},
		{
			name:     "merging a scalar",
			in:       "<<: x\na: 1\n",
			fields:   []string{"a=1"},
			problems: []string{`1:5: "<<" must merge a mapping, got string "x"`},
		},
		{
			name:     "merging a list with a scalar in it",
			in:       "m: &m {a: 1}\nitem: {<<: [*m, 7]}\n",
			key:      "item",
			fields:   []string{"a=1"},
			problems: []string{`2:17: "<<" must merge mappings, got number 7`},
		},
		{
			name:     "every problem, in the order found",
			in:       "a: 1\na: 2\n<<: [1]\n[x]: 3\n",
			fields:   []string{"a=1"},
			problems: []string{`2:1: duplicate key "a" (first at line 1)`, "4:1: keys must be strings, got a list", `3:6: "<<" must merge mappings, got number 1`},
		},
		{
			name:   "merges nested MaxMergeDepth deep",
			in:     mergeChain(MaxMergeDepth),
			key:    "top",
			fields: []string{"own=0", "k1=1", "k2=2", "k3=3", "k4=4", "k5=5", "k6=6", "k7=7", "k8=8", "k9=9", "k10=10"},
		},
		{
			name:     "merges nested one deeper",
			in:       mergeChain(MaxMergeDepth + 1),
			key:      "top",
			fields:   []string{"own=0", "k1=1", "k2=2", "k3=3", "k4=4", "k5=5", "k6=6", "k7=7", "k8=8", "k9=9", "k10=10"},
			problems: []string{`2:5: "<<" merges are nested more than 10 deep`},
		},
		{
			name:     "not a mapping",
			in:       "a: [1]\n",
			key:      "a",
			problems: []string{"1:4: expected a mapping, got a list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustParse(t, tt.in)
			if tt.key != "" {
				n = value(t, n, tt.key)
			}
			fields, problems := Fields(n)
			var got []string
			for _, f := range fields {
				v := f.Value.Value
				if f.Value.Kind != yaml.ScalarNode {
					v = Describe(f.Value)
				}
				if f.Value.Kind == yaml.AliasNode {
					t.Errorf("field %s: value not resolved", f.Name)
				}
				if Resolve(f.Key).Value != f.Name {
					t.Errorf("field %s: key node holds %q", f.Name, f.Key.Value)
				}
				got = append(got, f.Name+"="+v)
			}
			if !reflect.DeepEqual(got, tt.fields) {
				t.Errorf("fields\n got: %q\nwant: %q", got, tt.fields)
			}
			var gotP []string
			for _, p := range problems {
				gotP = append(gotP, p.Error())
			}
			if !reflect.DeepEqual(gotP, tt.problems) {
				t.Errorf("problems\n got: %q\nwant: %q", gotP, tt.problems)
			}
		})
	}
}

// A tree built by hand can merge itself without going through Parse's node
// bound; the depth bound still ends the walk with a problem, not a stack
// overflow.
func TestFieldsEndsOnASelfMergeBuiltByHand(t *testing.T) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!merge", Value: "<<"}, {Kind: yaml.AliasNode, Alias: m},
		str("k"), str("v"),
	}
	fields, problems := Fields(m)
	if len(fields) != 1 || fields[0].Name != "k" {
		t.Errorf("fields = %+v", fields)
	}
	if len(problems) != 1 || problems[0].Message != `"<<" merges are nested more than 10 deep` {
		t.Errorf("problems = %v", problems)
	}
}
