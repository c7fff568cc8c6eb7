package queue

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MarshalTask renders t as the task file of DESIGN.md section 5: keys in the
// documented order, a multi-line body as a literal block ("body: |") that
// reads like the text it holds, tags as a flow list. A body the literal style
// cannot carry exactly (trailing spaces on a line, some control characters)
// is written double-quoted instead, so the agent always reads the exact text.
func MarshalTask(t Task) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("queue: invalid task %q: %w", t.TaskID, err)
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	add("task_id", yamlString(t.TaskID))
	add("command_id", yamlString(t.CommandID))
	add("role", yamlString(t.Role))
	if t.From != "" {
		add("from", yamlString(t.From))
	}
	add("title", yamlString(t.Title))
	body := yamlString(t.Body)
	if strings.Contains(t.Body, "\n") {
		body.Style = yaml.LiteralStyle
	}
	add("body", body)
	if len(t.Tags) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, tag := range t.Tags {
			seq.Content = append(seq.Content, yamlString(tag))
		}
		add("tags", seq)
	}
	if t.Priority != "" {
		add("priority", yamlString(t.Priority))
	}
	add("assigned_at", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: t.AssignedAt.Format(time.RFC3339Nano)})
	if t.Attempt != 0 {
		add("attempt", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(t.Attempt)})
	}
	add("report_to", yamlString(t.ReportTo))

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("queue: encode task %q: %w", t.TaskID, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("queue: encode task %q: %w", t.TaskID, err)
	}
	return buf.Bytes(), nil
}

// yamlString is a string scalar; the encoder quotes it when plain text would
// read back as another type ("123", "true", "2026-11-22").
func yamlString(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}
