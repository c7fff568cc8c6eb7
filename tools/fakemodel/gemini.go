package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// geminiAPI is the Gemini API (POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse), which Gemini CLI speaks.
type geminiAPI struct{}

func (geminiAPI) name() string { return "gemini" }

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		Name string `json:"name"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

func (geminiAPI) parse(r *http.Request, body []byte) (*conversation, error) {
	var req struct {
		Contents []struct {
			Role  string       `json:"role"`
			Parts []geminiPart `json:"parts"`
		} `json:"contents"`
		SystemInstruction *struct {
			Parts []geminiPart `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string         `json:"name"`
				Parameters           map[string]any `json:"parameters"`
				ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig *struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseSchema     map[string]any `json:"responseSchema"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	// .../models/{model}:method
	p := r.URL.Path
	model := p[strings.LastIndex(p, "/models/")+len("/models/"):]
	model, _, _ = strings.Cut(model, ":")
	c := &conversation{Model: model, Stream: strings.HasSuffix(p, ":streamGenerateContent")}
	if g := req.GenerationConfig; g != nil {
		switch {
		case g.ResponseJSONSchema != nil:
			c.Schema = g.ResponseJSONSchema
		case g.ResponseSchema != nil:
			c.Schema = g.ResponseSchema
		case g.ResponseMimeType == "application/json":
			c.Schema = map[string]any{"type": "object"}
		}
	}
	if req.SystemInstruction != nil {
		for _, p := range req.SystemInstruction.Parts {
			c.System += p.Text
		}
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			params := f.ParametersJSONSchema
			if params == nil {
				params = f.Parameters
			}
			c.Tools = append(c.Tools, tool{Name: f.Name, Params: params})
		}
	}
	for _, content := range req.Contents {
		msg := message{Role: "user"}
		if content.Role == "model" {
			msg.Role = "assistant"
		}
		var texts []string
		for _, p := range content.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.Calls = append(msg.Calls, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				msg.Results = append(msg.Results, geminiResult(p.FunctionResponse.Response))
			case p.Text != "" && !p.Thought:
				texts = append(texts, p.Text)
			}
		}
		msg.Text = strings.Join(texts, "\n")
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

// geminiResult is a function response's text: its output or content
// field, else the response as JSON.
func geminiResult(raw json.RawMessage) string {
	var r map[string]any
	if json.Unmarshal(raw, &r) != nil {
		return string(raw)
	}
	for _, k := range []string{"output", "content", "result"} {
		if s, ok := r[k].(string); ok {
			return s
		}
	}
	return string(raw)
}

func (geminiAPI) write(out *stream, s *Server, c *conversation, st step) {
	var parts []any
	if st.Call != nil {
		parts = []any{map[string]any{"functionCall": map[string]any{"name": st.Call.Tool.Name, "args": st.Call.Args}}}
	} else {
		parts = []any{map[string]any{"text": st.Text}}
	}
	resp := func(parts []any, finish string) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{cand}, "modelVersion": c.Model, "responseId": s.nextID("fake"),
			"usageMetadata": map[string]any{"promptTokenCount": st.In, "candidatesTokenCount": st.Out, "totalTokenCount": st.In + st.Out}}
	}
	if !c.Stream {
		out.wait()
		writeJSON(out.w, http.StatusOK, resp(parts, "STOP"))
		return
	}
	if st.Call == nil {
		pieces := chunks(st.Text, 24)
		for i, p := range pieces {
			finish := ""
			if i == len(pieces)-1 {
				finish = "STOP"
			}
			out.event("", resp([]any{map[string]any{"text": p}}, finish))
		}
		return
	}
	if out.delay > 0 {
		out.event("", resp([]any{map[string]any{"text": ""}}, ""))
	}
	out.event("", resp(parts, "STOP"))
}

func (geminiAPI) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
}

// writeLimit answers with RESOURCE_EXHAUSTED, a daily QuotaFailure and a
// RetryInfo, which Gemini CLI takes for a quota it should not retry.
func (geminiAPI) writeLimit(w http.ResponseWriter, reset time.Time) {
	w.Header().Set("retry-after", strconv.Itoa(retryAfter(reset)))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
		"code": http.StatusTooManyRequests, "status": "RESOURCE_EXHAUSTED",
		"message": "You exceeded your current quota, please check your plan and billing details. " + limitText(reset),
		"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
				"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":         "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
				"quotaDimensions": map[string]any{"location": "global", "model": "gemini-2.5-pro"},
				"quotaValue":      "100"}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(retryAfter(reset)) + "s"},
		}}})
}
