package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// responsesAPI is the OpenAI Responses API (POST /v1/responses), which
// Codex speaks with wire_api = "responses".
type responsesAPI struct{}

func (responsesAPI) name() string { return "responses" }

type responsesTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters map[string]any  `json:"parameters"`
	Tools      []responsesTool `json:"tools"` // a namespace's tools
}

func (responsesAPI) parse(r *http.Request, body []byte) (*conversation, error) {
	var req struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        []responsesTool `json:"tools"`
		Text         *struct {
			Format *struct{ Schema map[string]any }
		} `json:"text"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	c := &conversation{Model: req.Model, Stream: req.Stream, System: req.Instructions}
	if req.Text != nil && req.Text.Format != nil && req.Text.Format.Schema != nil {
		c.Schema = req.Text.Format.Schema
	}
	for _, t := range req.Tools {
		switch t.Type {
		case "namespace":
			for _, in := range t.Tools {
				c.Tools = append(c.Tools, tool{Name: in.Name, Namespace: t.Name, Params: in.Parameters, Freeform: in.Type == "custom"})
			}
		default:
			if t.Name != "" {
				c.Tools = append(c.Tools, tool{Name: t.Name, Params: t.Parameters, Freeform: t.Type == "custom"})
			}
		}
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.Messages = []message{{Role: "user", Text: s}}
		return c, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Name    string          `json:"name"`
		Output  json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(req.Input, &items); err != nil {
		return nil, fmt.Errorf("responses request: input: %w", err)
	}
	last := func() *message {
		if len(c.Messages) == 0 {
			return nil
		}
		return &c.Messages[len(c.Messages)-1]
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			role := it.Role
			switch role {
			case "developer", "system":
				c.System += "\n" + responsesText(it.Content)
				continue
			case "assistant":
			default:
				role = "user"
			}
			c.Messages = append(c.Messages, message{Role: role, Text: responsesText(it.Content)})
		case "function_call", "custom_tool_call", "local_shell_call", "tool_search_call":
			if m := last(); m != nil && m.Role == "assistant" && len(m.Results) == 0 {
				m.Calls = append(m.Calls, it.Name)
			} else {
				c.Messages = append(c.Messages, message{Role: "assistant", Calls: []string{it.Name}})
			}
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output":
			out := responsesText(it.Output)
			if m := last(); m != nil && m.Role == "user" && len(m.Results) > 0 {
				m.Results = append(m.Results, out)
			} else {
				c.Messages = append(c.Messages, message{Role: "user", Results: []string{out}})
			}
		}
	}
	return c, nil
}

// responsesText is the text of a string, a list of content parts, or a
// function output object.
func responsesText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n")
	}
	var obj struct {
		Content string `json:"content"`
		Output  string `json:"output"`
	}
	if json.Unmarshal(raw, &obj) == nil && (obj.Content != "" || obj.Output != "") {
		return obj.Content + obj.Output
	}
	return string(raw)
}

func (responsesAPI) write(out *stream, s *Server, c *conversation, st step) {
	respID := s.nextID("resp_fake")
	if s.WindowUsed != nil {
		if pct, ok := s.WindowUsed(c.Key); ok {
			// As the ChatGPT backend names an account's 5-hour window.
			h := out.w.Header()
			h.Set("x-codex-primary-used-percent", strconv.FormatFloat(pct, 'f', -1, 64))
			h.Set("x-codex-primary-window-minutes", "300")
			h.Set("x-codex-primary-reset-at", strconv.FormatInt(s.now().Add(2*time.Hour).Unix(), 10))
		}
	}
	var item map[string]any
	if st.Call != nil {
		callID := s.nextID("call_fake")
		if st.Call.Tool.Freeform {
			item = map[string]any{"type": "custom_tool_call", "id": s.nextID("ctc_fake"), "status": "completed",
				"call_id": callID, "name": st.Call.Tool.Name, "input": st.Call.Input}
		} else {
			item = map[string]any{"type": "function_call", "id": s.nextID("fc_fake"), "status": "completed",
				"call_id": callID, "name": st.Call.Tool.Name, "arguments": st.Call.argsJSON()}
			if st.Call.Tool.Namespace != "" {
				item["namespace"] = st.Call.Tool.Namespace
			}
		}
	} else {
		item = map[string]any{"type": "message", "id": s.nextID("msg_fake"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": st.In, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": st.Out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": st.In + st.Out}
	resp := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": c.Model, "output": []any{item}, "usage": usage}
	if !c.Stream {
		out.wait()
		writeJSON(out.w, http.StatusOK, resp)
		return
	}
	seq := 0
	ev := func(name string, data map[string]any) {
		data["type"], data["sequence_number"] = name, seq
		seq++
		out.event(name, data)
	}
	created := map[string]any{"id": respID, "object": "response", "created_at": resp["created_at"], "status": "in_progress",
		"model": c.Model, "output": []any{}}
	ev("response.created", map[string]any{"response": created})
	ev("response.in_progress", map[string]any{"response": created})
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	switch item["type"] {
	case "message":
		added["content"] = []any{}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.content_part.added", map[string]any{"output_index": 0, "content_index": 0, "item_id": item["id"],
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range chunks(st.Text, 24) {
			ev("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": item["id"], "delta": part})
		}
		ev("response.output_text.done", map[string]any{"output_index": 0, "content_index": 0, "item_id": item["id"], "text": st.Text})
		ev("response.content_part.done", map[string]any{"output_index": 0, "content_index": 0, "item_id": item["id"],
			"part": map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}})
	case "function_call":
		added["arguments"] = ""
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		for _, part := range chunks(st.Call.argsJSON(), 40) {
			ev("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": part})
		}
		ev("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": item["arguments"]})
	case "custom_tool_call":
		added["input"] = ""
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.custom_tool_call_input.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": st.Call.Input})
		ev("response.custom_tool_call_input.done", map[string]any{"output_index": 0, "item_id": item["id"], "input": st.Call.Input})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp})
}

func (responsesAPI) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil, "param": nil}})
}

// writeLimit answers with OpenAI's usage_limit_reached error and its
// resets_at, the one 429 that Codex does not retry and shows with its
// reset time.
func (responsesAPI) writeLimit(w http.ResponseWriter, reset time.Time) {
	w.Header().Set("retry-after", strconv.Itoa(retryAfter(reset)))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
		"type": "usage_limit_reached", "message": limitText(reset), "plan_type": "plus",
		"resets_at": reset.Unix(), "resets_in_seconds": retryAfter(reset)}})
}
