package yamlstrict

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxAliasHops is how many aliases Resolve follows in a row. yaml.v3 never
// puts an anchor on an alias ("&b *a" is a syntax error), so a parsed tree
// needs one hop; the bound only keeps a tree built by hand from looping.
// It is the lower of the two limits the config and queue decoders used to
// have (8 and 100), and every valid file in the tests loads with it.
const MaxAliasHops = 8

// Resolve follows aliases to the node they name, so that anchors work
// everywhere a value does. It stops at an alias that names nothing (only
// in trees built by hand) and after MaxAliasHops, returning that alias;
// callers then see a node of the wrong kind, never nil for a non-nil n.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < MaxAliasHops; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n, with aliases resolved, is absent or null: "key:"
// with nothing after it, "~" or "null". Decoders read it as "not set".
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Describe names what a YAML node holds, for "must be X, got Y" messages:
// "a list", "string \"yes\"", "number 3". Long scalars are cut to 40
// characters so that a message stays one readable line. Every strict
// decoder words its errors with it, so they read alike.
func Describe(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil {
		return "null"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:37]) + "..."
		}
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "boolean " + v
		case "!!int", "!!float":
			return "number " + v
		case "!!str":
			return fmt.Sprintf("string %q", v)
		default:
			return fmt.Sprintf("%s %q", tag, v)
		}
	}
	return "an unsupported value"
}

// SuggestKey returns the known key within two edits of a misspelt one, for
// "did you mean" in unknown-key messages; "" when none is that close. Ties
// go to the key first in sort order, so the suggestion does not depend on
// the order callers list their keys in.
func SuggestKey(key string, known []string) string {
	if len(key) > 64 {
		return "" // not a typo of a short key; skip the quadratic work
	}
	best, bestDist := "", 3
	cands := append([]string(nil), known...)
	sort.Strings(cands)
	for _, k := range cands {
		if d := editDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
