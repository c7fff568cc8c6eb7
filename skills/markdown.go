package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Document is a skill file: YAML front matter with the name and the
// description, then the Markdown body.
type Document struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Body        string `yaml:"-"`
}

// Validate reports the first problem with d under the Agent Skills rules,
// or nil.
func (d Document) Validate() error {
	if err := ValidName(d.Name); err != nil {
		return err
	}
	if err := ValidDescription(d.Description); err != nil {
		return err
	}
	if strings.TrimSpace(d.Body) == "" {
		return errors.New("skill body is empty")
	}
	return nil
}

// Render writes d as a skill file:
//
//	---
//	name: add-react-form
//	description: ...
//	---
//
//	# Add a React form
//	...
//
// The front matter is written by the YAML encoder, so a description with
// colons or quotes reads back exactly; it is never folded over lines.
func Render(d Document) []byte {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, kv := range [][2]string{{"name", d.Name}, {"description", d.Description}} {
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[0]},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[1]})
	}
	var fm bytes.Buffer
	enc := yaml.NewEncoder(&fm)
	enc.SetIndent(2)
	// Encoding two strings cannot fail.
	_ = enc.Encode(m)
	_ = enc.Close()
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(fm.Bytes())
	b.WriteString("---\n\n")
	b.WriteString(strings.TrimLeft(strings.TrimRight(d.Body, "\n"), "\n"))
	b.WriteString("\n")
	return b.Bytes()
}

// Parse reads a skill file written by Render or edited by hand: front
// matter between two "---" lines with name and description (other keys
// are refused, since shogun would drop them), then the body. Windows line
// ends are accepted. It does not validate; see Document.Validate.
func Parse(data []byte) (Document, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") {
		return Document{}, errors.New(`skill file must start with a "---" line opening the front matter`)
	}
	rest := text[len("---\n"):]
	end := strings.Index(rest, "\n---\n")
	var fm, body string
	switch {
	case strings.HasPrefix(rest, "---\n"):
		fm, body = "", rest[len("---\n"):]
	case end >= 0:
		fm, body = rest[:end+1], rest[end+len("\n---\n"):]
	case strings.HasSuffix(rest, "\n---"):
		fm, body = rest[:len(rest)-len("---")], ""
	default:
		return Document{}, errors.New(`skill file has no "---" line closing the front matter`)
	}
	var d Document
	dec := yaml.NewDecoder(strings.NewReader(fm))
	dec.KnownFields(true)
	// An empty front matter decodes as io.EOF: Validate says what is missing.
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return Document{}, fmt.Errorf("skill front matter: %w (only name and description are kept)", err)
	}
	d.Name = strings.TrimSpace(d.Name)
	d.Description = oneLine(d.Description)
	d.Body = strings.TrimLeft(strings.TrimRight(body, "\n \t"), "\n") + "\n"
	return d, nil
}
