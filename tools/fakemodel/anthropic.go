package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// anthropicAPI is the Anthropic Messages API (POST /v1/messages), which
// Claude Code speaks.
type anthropicAPI struct{}

func (anthropicAPI) name() string { return "anthropic" }

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	ToolUseID string          `json:"tool_use_id"`
}

func (anthropicAPI) parse(r *http.Request, body []byte) (*conversation, error) {
	var req struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			Type        string         `json:"type"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		OutputFormat *struct {
			Type   string         `json:"type"`
			Schema map[string]any `json:"schema"`
		} `json:"output_format"`
		OutputConfig *struct {
			Format *struct {
				Type   string         `json:"type"`
				Schema map[string]any `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	c := &conversation{Model: req.Model, Stream: req.Stream, System: anthropicText(req.System)}
	if req.OutputFormat != nil && req.OutputFormat.Schema != nil {
		c.Schema = req.OutputFormat.Schema
	}
	if req.OutputConfig != nil && req.OutputConfig.Format != nil && req.OutputConfig.Format.Schema != nil {
		c.Schema = req.OutputConfig.Format.Schema
	}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, tool{Name: t.Name, Params: t.InputSchema})
	}
	for _, m := range req.Messages {
		msg := message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Text = s
			c.Messages = append(c.Messages, msg)
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, fmt.Errorf("messages request: content: %w", err)
		}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use", "server_tool_use":
				msg.Calls = append(msg.Calls, b.Name)
			case "tool_result":
				msg.Results = append(msg.Results, anthropicText(b.Content))
			}
		}
		msg.Text = strings.Join(texts, "\n")
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

// anthropicText is the text of a string or of a list of text blocks.
func anthropicText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func (a anthropicAPI) write(out *stream, s *Server, c *conversation, st step) {
	id := s.nextID("msg_fake")
	var blocks []map[string]any
	stop := "end_turn"
	if st.Call != nil {
		stop = "tool_use"
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": s.nextID("toolu_fake"), "name": st.Call.Tool.Name, "input": st.Call.Args})
	} else {
		blocks = append(blocks, map[string]any{"type": "text", "text": st.Text})
	}
	usage := map[string]any{"input_tokens": st.In, "output_tokens": st.Out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": blocks,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !c.Stream {
		out.wait()
		writeJSON(out.w, http.StatusOK, msg)
		return
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	// As Anthropic streams: the input in message_start (output 1 so
	// far), the final output count in message_delta.
	start["usage"] = map[string]any{"input_tokens": st.In, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	out.event("message_start", map[string]any{"type": "message_start", "message": start})
	out.event("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			out.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range chunks(st.Text, 24) {
				out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			out.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			for _, part := range chunks(st.Call.argsJSON(), 40) {
				out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		out.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	out.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": st.Out}})
	out.event("message_stop", map[string]any{"type": "message_stop"})
}

func (anthropicAPI) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

// writeLimit answers with the API's rate_limit_error and the headers of a
// subscription's exhausted limit (anthropic-ratelimit-unified-*). Claude
// Code 2.1.197 with an API key shows "API Error: Request rejected (429) ·
// <message>" and does not retry (x-should-retry: false).
func (anthropicAPI) writeLimit(w http.ResponseWriter, reset time.Time) {
	unix := strconv.FormatInt(reset.Unix(), 10)
	h := w.Header()
	h.Set("retry-after", strconv.Itoa(retryAfter(reset)))
	h.Set("x-should-retry", "false")
	h.Set("anthropic-ratelimit-unified-status", "rejected")
	h.Set("anthropic-ratelimit-unified-reset", unix)
	h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
	h.Set("anthropic-ratelimit-unified-5h-status", "rejected")
	h.Set("anthropic-ratelimit-unified-5h-reset", unix)
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"type": "error",
		"error": map[string]any{"type": "rate_limit_error", "message": limitText(reset)}})
}

// chunks splits s into pieces of about n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && s[i]&0xC0 == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}
