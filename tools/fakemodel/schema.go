package fakemodel

import "sort"

// fillSchema returns a value that matches a JSON schema (or Gemini's
// OpenAPI-style schema, whose types are upper case): the first enum value,
// the default, "fakemodel" for a string, 0, false, an object with every
// property filled. Side requests that want JSON get it.
func fillSchema(s map[string]any, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if d, ok := s["default"]; ok {
		return d
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := s[k].([]any); ok && len(l) > 0 {
			if m, ok := l[0].(map[string]any); ok {
				return fillSchema(m, depth+1)
			}
		}
	}
	ty, _ := s["type"].(string)
	if l, ok := s["type"].([]any); ok && len(l) > 0 {
		ty, _ = l[0].(string)
	}
	switch lower(ty) {
	case "string":
		return "fakemodel"
	case "integer", "number":
		if m, ok := s["minimum"]; ok {
			return m
		}
		return 0
	case "boolean":
		return false
	case "array":
		item, _ := s["items"].(map[string]any)
		n := 0
		if m, ok := s["minItems"].(float64); ok {
			n = int(m)
		}
		out := make([]any, 0, n)
		for range n {
			out = append(out, fillSchema(item, depth+1))
		}
		return out
	case "null":
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			out[k] = fillSchema(p, depth+1)
		}
	}
	return out
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
