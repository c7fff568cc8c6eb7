package yamlstrict

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// mustParse parses a document the test knows is good.
func mustParse(t *testing.T, in string) *yaml.Node {
	t.Helper()
	root, err := Parse([]byte(in), 0)
	if err != nil {
		t.Fatalf("parse %q: %v", in, err)
	}
	return root
}

// value returns the value of key in the mapping root, as written.
func value(t *testing.T, root *yaml.Node, key string) *yaml.Node {
	t.Helper()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	t.Fatalf("no key %q", key)
	return nil
}

// aliasChain builds by hand what a parser never makes: n aliases in a row
// before the scalar "end".
func aliasChain(n int) *yaml.Node {
	node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "end"}
	for range n {
		node = &yaml.Node{Kind: yaml.AliasNode, Alias: node}
	}
	return node
}

func TestResolve(t *testing.T) {
	root := mustParse(t, "a: &x {k: v}\nb: *x\nc: plain\n")
	dangling := &yaml.Node{Kind: yaml.AliasNode}
	tests := []struct {
		name string
		in   *yaml.Node
		want string // Describe of the result, or "alias" for an alias left as it is
	}{
		{"a parsed alias", value(t, root, "b"), "a mapping"},
		{"not an alias", value(t, root, "c"), `string "plain"`},
		{"one hop by hand", aliasChain(1), `string "end"`},
		{"MaxAliasHops by hand", aliasChain(MaxAliasHops), `string "end"`},
		{"one hop too many", aliasChain(MaxAliasHops + 1), "alias"},
		{"an alias to nothing", dangling, "alias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resolve(tt.in)
			desc := Describe(got)
			if got.Kind == yaml.AliasNode {
				desc = "alias"
			}
			if desc != tt.want {
				t.Errorf("Resolve = %s, want %s", desc, tt.want)
			}
		})
	}
	if Resolve(nil) != nil {
		t.Error("Resolve(nil) is not nil")
	}
	if got := Resolve(value(t, root, "b")); got != value(t, root, "a") {
		t.Error("a parsed alias does not resolve to its anchor")
	}
}

func TestIsNull(t *testing.T) {
	root := mustParse(t, "empty:\ntilde: ~\nword: null\nalias: &n ~\nto-null: *n\nblank: ''\nzero: 0\nlist: []\n")
	for key, want := range map[string]bool{
		"empty": true, "tilde": true, "word": true, "alias": true, "to-null": true,
		"blank": false, "zero": false, "list": false,
	} {
		if got := IsNull(value(t, root, key)); got != want {
			t.Errorf("IsNull(%s) = %v, want %v", key, got, want)
		}
	}
	if !IsNull(nil) {
		t.Error("IsNull(nil) = false: an absent key is not set")
	}
	if IsNull(&yaml.Node{Kind: yaml.AliasNode}) {
		t.Error("an alias to nothing is null, want it left for the caller to refuse")
	}
}

func TestDescribe(t *testing.T) {
	root := mustParse(t, `map: {a: 1}
list: [1]
str: "yes"
plain: hello
int: 3
float: 2.5
bool: true
null: ~
time: 2026-11-22
bin: !!binary aGk=
custom: !thing x
long: `+strings.Repeat("x", 50)+`
kanji: `+strings.Repeat("字", 41)+`
anchor: &a [1, 2]
alias: *a
`)
	tests := []struct{ key, want string }{
		{"map", "a mapping"},
		{"list", "a list"},
		{"str", `string "yes"`},
		{"plain", `string "hello"`},
		{"int", "number 3"},
		{"float", "number 2.5"},
		{"bool", "boolean true"},
		{"null", "null"},
		{"time", `!!timestamp "2026-11-22"`},
		{"bin", `!!binary "aGk="`},
		{"custom", `!thing "x"`},
		{"long", `string "` + strings.Repeat("x", 37) + `..."`},
		{"kanji", `string "` + strings.Repeat("字", 37) + `..."`},
		{"alias", "a list"},
	}
	for _, tt := range tests {
		if got := Describe(value(t, root, tt.key)); got != tt.want {
			t.Errorf("Describe(%s) = %s, want %s", tt.key, got, tt.want)
		}
	}
	if got := Describe(nil); got != "null" {
		t.Errorf("Describe(nil) = %s", got)
	}
	if got := Describe(&yaml.Node{Kind: yaml.AliasNode}); got != "an unsupported value" {
		t.Errorf("Describe(alias to nothing) = %s", got)
	}
}

func TestSuggestKey(t *testing.T) {
	known := []string{"title", "body", "priority", "to", "tags"}
	tests := []struct{ key, want string }{
		{"priorty", "priority"},
		{"Title", "title"},
		{"tittle", "title"},
		{"bdy", "body"},
		{"owner", ""},
		{"tag", "tags"},
		{"t", "to"},
		{strings.Repeat("title", 13), ""},
	}
	for _, tt := range tests {
		if got := SuggestKey(tt.key, known); got != tt.want {
			t.Errorf("SuggestKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	// Ties go to the first key in sort order, whatever order callers use.
	if a, b := SuggestKey("ab", []string{"ac", "aa"}), SuggestKey("ab", []string{"aa", "ac"}); a != "aa" || b != "aa" {
		t.Errorf("tie: %q and %q, want \"aa\" both times", a, b)
	}
}
