package fakemodel

import (
	"encoding/json"
	"testing"
)

// Each API's answer reports its usage in that API's own fields, the
// numbers the server records for the request (a quarter of the request's
// bytes in, a quarter of the answer's out), and Served sums them per
// credential: what a CLI would write down is what the server served.
func TestUsageInEachAPIsFields(t *testing.T) {
	s := start(t, &Server{})
	num := func(v any) int {
		f, _ := v.(float64)
		return int(f)
	}
	field := func(m map[string]any, keys ...string) any {
		var v any = m
		for _, k := range keys {
			mm, _ := v.(map[string]any)
			v = mm[k]
		}
		return v
	}
	cases := []struct {
		api, path string
		body      map[string]any
		header    []string
		usage     func(evs []sseEvent) (in, out int)
	}{
		{"anthropic", "/v1/messages", map[string]any{"model": "claude-opus-4-5", "max_tokens": 100, "stream": true,
			"tools": anthropicTools, "messages": anthropicTurns("Say hello")}, []string{"x-api-key", "key-a"},
			func(evs []sseEvent) (int, int) {
				var in, out int
				for _, e := range evs {
					switch e.name {
					case "message_start":
						in = num(field(e.data, "message", "usage", "input_tokens"))
					case "message_delta":
						out = num(field(e.data, "usage", "output_tokens"))
					}
				}
				return in, out
			}},
		{"responses", "/v1/responses", map[string]any{"model": "gpt-5", "stream": true, "input": codexInput("Say hello")},
			[]string{"Authorization", "Bearer key-b"},
			func(evs []sseEvent) (int, int) {
				u := field(evs[len(evs)-1].data, "response", "usage").(map[string]any)
				return num(u["input_tokens"]), num(u["output_tokens"])
			}},
		{"gemini", "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
			map[string]any{"contents": geminiContents("Say hello")}, []string{"x-goog-api-key", "key-a"},
			func(evs []sseEvent) (int, int) {
				u := evs[len(evs)-1].data["usageMetadata"].(map[string]any)
				return num(u["promptTokenCount"]), num(u["candidatesTokenCount"])
			}},
		{"chat", "/v1/chat/completions", map[string]any{"model": "gpt-5", "stream": true, "messages": chatMessages("Say hello")},
			[]string{"Authorization", "Bearer key-b"},
			func(evs []sseEvent) (int, int) {
				for i := len(evs) - 1; i >= 0; i-- {
					if u, ok := evs[i].data["usage"].(map[string]any); ok {
						return num(u["prompt_tokens"]), num(u["completion_tokens"])
					}
				}
				return 0, 0
			}},
	}
	want := map[string]Tokens{}
	for _, c := range cases {
		status, _, body := post(t, s.URL()+c.path, c.body, c.header...)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", c.api, status, body)
		}
		reqs := s.Requests()
		rec := reqs[len(reqs)-1]
		sent, _ := json.Marshal(c.body)
		if rec.API != c.api || rec.InputTokens != len(sent)/4 || rec.OutputTokens < 1 || rec.Key == "" {
			t.Errorf("%s: recorded %+v for a body of %d bytes", c.api, rec, len(sent))
		}
		in, out := c.usage(parseSSE(t, body))
		if in != rec.InputTokens || out != rec.OutputTokens {
			t.Errorf("%s: the answer reports %d in, %d out; the server recorded %d, %d", c.api, in, out, rec.InputTokens, rec.OutputTokens)
		}
		w := want[rec.Key]
		w.Input, w.Output, w.Calls = w.Input+in, w.Output+out, w.Calls+1
		want[rec.Key] = w
	}
	got := s.Served()
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("served per key %+v, want two keys", got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("served to %s = %+v, want %+v", k, got[k], w)
		}
	}
}
