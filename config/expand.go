package config

import (
	"fmt"
	"os"
	"strings"
)

// ExpandEnv expands ${VAR} and ${VAR:-default} in s with lookup (os.LookupEnv
// when nil). An unset ${VAR} becomes "" rather than an error, as in a shell,
// so that optional variables need no default; ${VAR:-default} uses default
// when VAR is unset or empty, and the default may itself contain ${...}.
//
// Only the braced forms are expanded: "$HOME", "$env:PATH" or "$1" pass
// through untouched because they are meant for the program or shell that
// receives them (PowerShell arguments in particular). "$${" writes a literal
// "${".
func ExpandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	return expandEnv(s, lookup, nil)
}

// expandEnv is ExpandEnv that also appends to unset, when not nil, the name
// of every variable that expanded to "" because it is not set and had no
// default: Load warns about those.
func expandEnv(s string, lookup func(string) (string, bool), unset *[]string) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := closingBrace(s, i+2)
			if end < 0 {
				return "", fmt.Errorf("cannot expand %q: \"${\" at offset %d has no closing \"}\"", s, i)
			}
			v, err := expandVar(s[i+2:end], lookup, unset)
			if err != nil {
				return "", fmt.Errorf("cannot expand %q: %w", s, err)
			}
			b.WriteString(v)
			i = end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// closingBrace finds the "}" that closes a "${" whose body starts at from,
// skipping nested ${...} in a default value.
func closingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// expandVar expands the inside of one ${...}.
func expandVar(expr string, lookup func(string) (string, bool), unset *[]string) (string, error) {
	name, def, hasDefault := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("%q is not a variable name (letters, digits and _, not starting with a digit)", name)
	}
	v, ok := lookup(name)
	if hasDefault && (!ok || v == "") {
		return expandEnv(def, lookup, unset)
	}
	if !ok && unset != nil {
		*unset = append(*unset, name)
	}
	return v, nil
}

func validVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
