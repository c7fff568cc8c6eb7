package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// chatAPI is the OpenAI Chat Completions API (POST /v1/chat/completions),
// which Copilot CLI's own-provider mode speaks.
type chatAPI struct{}

func (chatAPI) name() string { return "chat" }

func (chatAPI) parse(r *http.Request, body []byte) (*conversation, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
				Custom struct {
					Name string `json:"name"`
				} `json:"custom"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
			// A freeform tool (Copilot CLI's apply_patch).
			Custom struct {
				Name string `json:"name"`
			} `json:"custom"`
		} `json:"tools"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema map[string]any `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	c := &conversation{Model: req.Model, Stream: req.Stream}
	if f := req.ResponseFormat; f != nil && f.JSONSchema != nil && f.JSONSchema.Schema != nil {
		c.Schema = f.JSONSchema.Schema
	}
	for _, t := range req.Tools {
		if t.Type == "custom" {
			c.Tools = append(c.Tools, tool{Name: t.Custom.Name, Freeform: true})
			continue
		}
		c.Tools = append(c.Tools, tool{Name: t.Function.Name, Params: t.Function.Parameters})
	}
	for _, m := range req.Messages {
		text := responsesText(m.Content)
		if string(m.Content) == "null" || len(m.Content) == 0 {
			text = ""
		}
		switch m.Role {
		case "system", "developer":
			c.System += text + "\n"
		case "assistant":
			msg := message{Role: "assistant", Text: text}
			for _, tc := range m.ToolCalls {
				msg.Calls = append(msg.Calls, tc.Function.Name+tc.Custom.Name)
			}
			c.Messages = append(c.Messages, msg)
		case "tool", "function":
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "user" && len(c.Messages[n-1].Results) > 0 {
				c.Messages[n-1].Results = append(c.Messages[n-1].Results, text)
			} else {
				c.Messages = append(c.Messages, message{Role: "user", Results: []string{text}})
			}
		default:
			c.Messages = append(c.Messages, message{Role: "user", Text: text})
		}
	}
	return c, nil
}

func (chatAPI) write(out *stream, s *Server, c *conversation, st step) {
	id := s.nextID("chatcmpl-fake")
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": st.In, "completion_tokens": st.Out, "total_tokens": st.In + st.Out}
	msg := map[string]any{"role": "assistant", "content": st.Text}
	finish := "stop"
	var tc map[string]any
	if st.Call != nil {
		finish = "tool_calls"
		tc = map[string]any{"id": s.nextID("call_fake"), "type": "function",
			"function": map[string]any{"name": st.Call.Tool.Name, "arguments": st.Call.argsJSON()}}
		if st.Call.Tool.Freeform {
			tc = map[string]any{"id": tc["id"], "type": "custom",
				"custom": map[string]any{"name": st.Call.Tool.Name, "input": st.Call.Input}}
		}
		msg["content"], msg["tool_calls"] = nil, []any{tc}
	}
	if !c.Stream {
		out.wait()
		writeJSON(out.w, http.StatusOK, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	out.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if tc != nil && tc["type"] == "custom" {
		// A freeform call goes in one piece: clients do not join custom
		// input deltas.
		tc["index"] = 0
		out.event("", chunk(map[string]any{"tool_calls": []any{tc}}, nil))
	} else if tc != nil {
		fn := tc["function"].(map[string]any)
		out.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": tc["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil))
		for _, part := range chunks(st.Call.argsJSON(), 40) {
			out.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
				"function": map[string]any{"arguments": part}}}}, nil))
		}
	} else {
		for _, part := range chunks(st.Text, 24) {
			out.event("", chunk(map[string]any{"content": part}, nil))
		}
	}
	out.event("", chunk(map[string]any{}, finish))
	last := chunk(map[string]any{}, nil)
	last["choices"], last["usage"] = []any{}, usage
	out.event("", last)
	out.event("", "[DONE]")
}

func (chatAPI) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil, "param": nil}})
}

// writeLimit answers with OpenAI's rate_limit_exceeded error.
func (chatAPI) writeLimit(w http.ResponseWriter, reset time.Time) {
	w.Header().Set("retry-after", strconv.Itoa(retryAfter(reset)))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
		"message": "Rate limit exceeded. " + limitText(reset), "type": "rate_limit_exceeded", "code": "rate_limit_exceeded", "param": nil}})
}
