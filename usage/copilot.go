package usage

import (
	"encoding/json"
	"strconv"
	"time"
)

// Copilot CLI's tokens are read from its OpenTelemetry export, which
// 1.0.102 writes as JSON lines to the file COPILOT_OTEL_FILE_EXPORTER_PATH
// names (no collector, no network: `copilot help monitoring`), a
// documented interface. The supervisor sets it for a copilot role whose
// environment exports nowhere else (CopilotOTelFile). (1.0.102 also writes
// session.usage_record events into ~/.copilot/session-state/<session>/
// events.jsonl, undocumented; they are not read, so nothing counts twice.)

// The variables Copilot CLI's OpenTelemetry export reads.
const (
	// CopilotOTelFileVar names the JSON-lines file; set, it turns the
	// export on and chooses the file exporter.
	CopilotOTelFileVar = "COPILOT_OTEL_FILE_EXPORTER_PATH"
	// copilotOTelTypeVar and otlpEndpointVar choose another exporter: a
	// person's own collector, which shogun leaves alone.
	copilotOTelTypeVar = "COPILOT_OTEL_EXPORTER_TYPE"
	otlpEndpointVar    = "OTEL_EXPORTER_OTLP_ENDPOINT"
)

// CopilotOTelFile is the file a copilot role's tokens are read from, as
// its environment (lookup) says: the one it names in
// COPILOT_OTEL_FILE_EXPORTER_PATH, or fallback, which the supervisor then
// sets (set true). A role that exports to a collector
// (OTEL_EXPORTER_OTLP_ENDPOINT, COPILOT_OTEL_EXPORTER_TYPE) has none: its
// tokens are not counted.
func CopilotOTelFile(lookup func(string) (string, bool), fallback string) (path string, set bool) {
	if p, _ := lookup(CopilotOTelFileVar); p != "" {
		return p, false
	}
	for _, k := range []string{copilotOTelTypeVar, otlpEndpointVar} {
		if v, _ := lookup(k); v != "" {
			return "", false
		}
	}
	return fallback, true
}

// copilotParser reads Copilot CLI's OpenTelemetry lines: a span of
// operation "chat" is one model call, with the GenAI semantic conventions'
// usage attributes. The invoke_agent span around it repeats the sums of
// its calls and is not counted; metrics are not read.
type copilotParser struct{}

type copilotLine struct {
	Type       string           `json:"type"`
	SpanID     string           `json:"spanId"`
	EndTime    []int64          `json:"endTime"` // [seconds, nanoseconds]
	Attributes copilotSpanAttrs `json:"attributes"`
}

type copilotSpanAttrs struct {
	Operation     string `json:"gen_ai.operation.name"`
	RequestModel  string `json:"gen_ai.request.model"`
	ResponseModel string `json:"gen_ai.response.model"`
	ResponseID    string `json:"gen_ai.response.id"`
	// Input counts every prompt token, the cached ones included (the
	// conventions' gen_ai.usage.input_tokens).
	Input      *int64 `json:"gen_ai.usage.input_tokens"`
	Output     int64  `json:"gen_ai.usage.output_tokens"`
	CacheRead  int64  `json:"gen_ai.usage.cache_read.input_tokens"`
	CacheWrite int64  `json:"gen_ai.usage.cache_creation.input_tokens"`
	Reasoning  int64  `json:"gen_ai.usage.reasoning.output_tokens"`
}

func (*copilotParser) line(b []byte, offset int64) ([]Record, bool) {
	var l copilotLine
	if json.Unmarshal(b, &l) != nil || l.Type != "span" || l.Attributes.Operation != "chat" || l.Attributes.Input == nil {
		return nil, true
	}
	a := l.Attributes
	key := a.ResponseID
	if key == "" {
		key = l.SpanID
	}
	if key == "" {
		key = "@" + strconv.FormatInt(offset, 10)
	}
	var at time.Time
	if len(l.EndTime) == 2 {
		at = time.Unix(l.EndTime[0], l.EndTime[1])
	}
	model := a.ResponseModel
	if model == "" {
		model = a.RequestModel
	}
	// The file is in a folder the role can write: a count below 0 is
	// refused (Read).
	if *a.Input < 0 || a.Output < 0 || a.CacheRead < 0 || a.CacheWrite < 0 || a.Reasoning < 0 {
		return []Record{forged(key)}, true
	}
	// Input is kept apart from the cache, as for the other CLIs.
	input := max(*a.Input-a.CacheRead-a.CacheWrite, 0)
	return []Record{{Key: key, At: at, Model: model, Tokens: Tokens{
		Input: input, Output: a.Output, CacheRead: a.CacheRead, CacheWrite: a.CacheWrite, Reasoning: a.Reasoning}}}, true
}

func (*copilotParser) state() string { return "" }
