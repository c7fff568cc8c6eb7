package shoguntest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// DocShape is one JSON shape as a document in docs/ describes it, under
// its own heading: an example in the first ```json block, and a table
// whose rows start with a key path in backquotes: `id`, `roles[].state`
// (a key of each element of the roles array), `task.id` (a key of an
// object). A row that says *optional* is a key left out when empty.
type DocShape struct {
	Doc, Heading string
	Example      []byte
	Keys         []string
	Optional     map[string]bool
}

// ReadDocShape reads the shape under the heading (the whole line, "## GET
// /v1/status") of a document of the module's docs folder ("api.md"). The
// section ends at the next heading of the same or a higher level.
func ReadDocShape(t testing.TB, doc, heading string) DocShape {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "docs", doc)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the documentation: %v", err)
	}
	level := strings.IndexByte(heading, ' ')
	sh := DocShape{Doc: doc, Heading: heading, Optional: map[string]bool{}}
	in, found, inBlock, isJSON := false, false, false, false
	var example bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in && !inBlock && sh.Example == nil {
				isJSON = strings.TrimPrefix(line, "```") == "json"
			}
			if inBlock && isJSON && sh.Example == nil {
				sh.Example = bytes.Clone(example.Bytes())
				isJSON = false
			}
			inBlock = !inBlock
			continue
		}
		if inBlock {
			if in && isJSON {
				example.WriteString(line + "\n")
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			lv := strings.IndexByte(line, ' ')
			if in && lv > 0 && lv <= level {
				break
			}
			if strings.TrimSpace(line) == heading {
				in, found = true, true
			}
			continue
		}
		if in && strings.HasPrefix(line, "| `") {
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			sh.Keys = append(sh.Keys, key)
			sh.Optional[key] = strings.Contains(line, "*optional*")
		}
	}
	switch {
	case !found:
		t.Fatalf("docs/%s has no heading %q", doc, heading)
	case sh.Example == nil:
		t.Fatalf("docs/%s, %q: no ```json example", doc, heading)
	case len(sh.Keys) == 0:
		t.Fatalf("docs/%s, %q: no table of keys", doc, heading)
	}
	return sh
}

// moduleRoot is the folder of go.mod above the test's folder.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// CheckDocShape fails the test unless the shape's example and its table
// both name exactly the JSON keys of the Go type v (a value of the type,
// or of a slice of it for an array), optional ones included, the table
// marks optional exactly the keys the type may leave out, and the
// example's values have the types' JSON kinds.
func CheckDocShape(t testing.TB, sh DocShape, v any) {
	t.Helper()
	typ := reflect.TypeOf(v)
	want := map[string]bool{}
	typeKeys(typ, "", want)
	var ex any
	if err := json.Unmarshal(sh.Example, &ex); err != nil {
		t.Fatalf("docs/%s, %q: the example is not JSON: %v\n%s", sh.Doc, sh.Heading, err, sh.Example)
	}
	got := map[string]bool{}
	var problems []string
	valueKeys(ex, typ, "", got, &problems)
	for _, p := range problems {
		t.Errorf("docs/%s, %s: the example: %s", sh.Doc, sh.Heading, p)
	}
	diffKeys(t, "docs/"+sh.Doc+", "+sh.Heading+": the example", keysOf(got), want)
	diffKeys(t, "docs/"+sh.Doc+", "+sh.Heading+": the table", sh.Keys, want)
	for _, k := range sh.Keys {
		if optional, ok := want[k]; ok && optional != sh.Optional[k] {
			t.Errorf("docs/%s, %s: the table says %q is optional: %v; the Go type (omitempty, omitzero): %v", sh.Doc, sh.Heading, k, sh.Optional[k], optional)
		}
	}
}

// CheckOutput fails the test unless out, a command's or the API's JSON,
// holds only keys the shape documents, every key of v's type that is not
// optional (omitempty, omitzero), arrays and objects rather than null, and
// no unset time.
func CheckOutput(t testing.TB, sh DocShape, v any, out []byte) {
	t.Helper()
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the output is not JSON: %v\n%s", err, out)
	}
	keys := map[string]bool{}
	var problems []string
	valueKeys(got, reflect.TypeOf(v), "", keys, &problems)
	for _, p := range problems {
		t.Errorf("%s: %s\n%s", sh.Heading, p, out)
	}
	for _, k := range keysOf(keys) {
		if !slices.Contains(sh.Keys, k) {
			t.Errorf("%s: the output has the key %q, which docs/%s does not list", sh.Heading, k, sh.Doc)
		}
	}
}

// typeKeys adds the key paths of typ's JSON to keys, each with whether it
// may be left out.
func typeKeys(typ reflect.Type, prefix string, keys map[string]bool) {
	typ = deref(typ)
	switch {
	case typ == timeType:
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array:
		typeKeys(typ.Elem(), elemPrefix(prefix), keys)
	case typ.Kind() == reflect.Struct:
		for _, f := range jsonFields(typ) {
			p := join(prefix, f.name)
			keys[p] = f.optional
			typeKeys(f.typ, p, keys)
		}
	}
}

// valueKeys adds the key paths found in v, JSON decoded into any and read
// as typ, to keys, and says what is wrong with it in problems.
func valueKeys(v any, typ reflect.Type, prefix string, keys map[string]bool, problems *[]string) {
	at := prefix
	if at == "" {
		at = "the top level"
	}
	bad := func(format string) {
		*problems = append(*problems, strings.ReplaceAll(format, "%at", at))
	}
	typ = deref(typ)
	switch {
	case typ == timeType:
		s, ok := v.(string)
		if !ok {
			bad("%at is not a string, want an RFC 3339 time")
			return
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			bad("%at: " + err.Error())
		} else if tm.IsZero() {
			bad("%at is the zero time; an unset time is left out")
		}
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			bad("%at is not an array")
			return
		}
		for _, e := range arr {
			valueKeys(e, typ.Elem(), elemPrefix(prefix), keys, problems)
		}
	case typ.Kind() == reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			bad("%at is not an object")
		}
	case typ.Kind() == reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			bad("%at is not an object")
			return
		}
		fields := map[string]jsonField{}
		for _, f := range jsonFields(typ) {
			fields[f.name] = f
			if _, there := obj[f.name]; !there && !f.optional {
				bad("%at lacks the key " + f.name)
			}
		}
		for k, e := range obj {
			p := join(prefix, k)
			keys[p] = true
			if f, known := fields[k]; known {
				valueKeys(e, f.typ, p, keys, problems)
			}
		}
	case typ.Kind() == reflect.String:
		if _, ok := v.(string); !ok {
			bad("%at is not a string")
		}
	case typ.Kind() == reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad("%at is not true or false")
		}
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Float64:
		if _, ok := v.(float64); !ok {
			bad("%at is not a number")
		}
	}
}

var timeType = reflect.TypeOf(time.Time{})

type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool
}

// jsonFields are the fields encoding/json writes for a struct type.
func jsonFields(typ reflect.Type) []jsonField {
	var out []jsonField
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := false
		for _, o := range strings.Split(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		out = append(out, jsonField{name: name, typ: f.Type, optional: optional})
	}
	return out
}

func deref(typ reflect.Type) reflect.Type {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ
}

// elemPrefix is the prefix of an array's elements: none for the top-level
// array, "roles[]" for the array under roles.
func elemPrefix(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "[]"
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// diffKeys reports the keys of got that want lacks and the other way round.
func diffKeys(t testing.TB, what string, got []string, want map[string]bool) {
	t.Helper()
	for _, k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s has the key %q, which the Go type does not", what, k)
		}
	}
	for _, k := range keysOf(want) {
		if !slices.Contains(got, k) {
			t.Errorf("%s lacks the key %q of the Go type", what, k)
		}
	}
}
