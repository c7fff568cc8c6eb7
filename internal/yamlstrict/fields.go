package yamlstrict

import "gopkg.in/yaml.v3"

// MaxMergeDepth bounds how deep "<<" merges nest: a mapping that merges one
// that merges another, and so on. Parse already refuses the self-merges
// that would never end ("&a {<<: *a}" counts as an alias bomb); the bound
// keeps Fields finite on trees that did not come through Parse, and a real
// file never comes near it.
const MaxMergeDepth = 10

// Field is one key of a mapping.
type Field struct {
	// Name is the key's text.
	Name string
	// Key is the key node as written, for positions: a key given by an
	// alias is located where the alias is used. Keys merged in with "<<"
	// are located where the merged mapping wrote them.
	Key *yaml.Node
	// Value is the value with aliases resolved.
	Value *yaml.Node
}

// Fields lists the keys of mapping n in document order, then the keys
// merged in with "<<" (a mapping or a list of mappings), which never
// override keys written out, earlier merges winning over later ones. It
// returns every problem, in the order found (own keys before merged ones),
// with the fields that were fine: a key that is not a string, a key written twice
// in one mapping (the first one counts), a "<<" of something other than
// mappings, merges nested more than MaxMergeDepth deep. Decoders that stop
// at the first problem take problems[0]; those that report everything
// report them all.
func Fields(n *yaml.Node) ([]Field, []*Error) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, []*Error{errorAt(n, "expected a mapping, got %s", Describe(n))}
	}
	c := collector{taken: map[string]bool{}}
	c.collect(n, 0)
	return c.fields, c.problems
}

type collector struct {
	fields   []Field
	problems []*Error
	taken    map[string]bool // names already in fields
}

func (c *collector) errorf(n *yaml.Node, format string, args ...any) {
	c.problems = append(c.problems, errorAt(n, format, args...))
}

func (c *collector) collect(n *yaml.Node, depth int) {
	var merges []*yaml.Node
	own := map[string]*yaml.Node{} // duplicates are refused per mapping
	for i := 0; i+1 < len(n.Content); i += 2 {
		written, v := n.Content[i], n.Content[i+1]
		k := Resolve(written)
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			c.errorf(written, "keys must be strings, got %s", Describe(k))
			continue
		}
		if first, dup := own[k.Value]; dup {
			c.errorf(written, "duplicate key %q (first at line %d)", k.Value, first.Line)
			continue
		}
		own[k.Value] = written
		if c.taken[k.Value] {
			continue
		}
		c.taken[k.Value] = true
		c.fields = append(c.fields, Field{Name: k.Value, Key: written, Value: Resolve(v)})
	}
	for _, v := range merges {
		v = Resolve(v)
		if depth+1 > MaxMergeDepth {
			c.errorf(v, `"<<" merges are nested more than %d deep`, MaxMergeDepth)
			return
		}
		switch v.Kind {
		case yaml.MappingNode:
			c.collect(v, depth+1)
		case yaml.SequenceNode:
			for _, item := range v.Content {
				if item = Resolve(item); item.Kind == yaml.MappingNode {
					c.collect(item, depth+1)
				} else {
					c.errorf(item, `"<<" must merge mappings, got %s`, Describe(item))
				}
			}
		default:
			c.errorf(v, `"<<" must merge a mapping, got %s`, Describe(v))
		}
	}
}
