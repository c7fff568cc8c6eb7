package usage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// claudeProject is the folder name Claude Code gives a working directory
// under projects/: every character other than a letter or digit becomes
// '-'.
func claudeProject(workdir string) string {
	return nonAlnum.ReplaceAllString(filepath.Clean(workdir), "-")
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// claudeParser reads Claude Code's transcript lines: an assistant line
// carries message.usage, and while a reply streams the same message (same
// message id and request id) is written on several lines; the key makes
// it count once.
type claudeParser struct{}

type claudeLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	RequestID string    `json:"requestId"`
	Message   struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			Input      int64 `json:"input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			Output     int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

func (*claudeParser) line(b []byte, offset int64) ([]Record, bool) {
	var l claudeLine
	if json.Unmarshal(b, &l) != nil || l.Type != "assistant" || l.Message.Usage == nil {
		return nil, true
	}
	if l.Message.Model == "<synthetic>" {
		// Claude Code's own messages (an API error shown as the answer, an
		// interrupted turn): no model was called, and no price applies.
		return nil, true
	}
	key := l.Message.ID + "/" + l.RequestID
	if l.Message.ID == "" {
		key = "@" + strconv.FormatInt(offset, 10)
	}
	u := l.Message.Usage
	return []Record{{Key: key, At: l.Timestamp, Model: l.Message.Model, Tokens: Tokens{
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}}}, true
}

func (*claudeParser) state() string { return "" }

// codexParser reads a Codex rollout: its session_meta line says in which
// folder the session runs, turn_context lines the model, and a
// token_usage_record line (Codex 0.169) the usage of one response, keyed
// by its response id. Rollouts of older versions have only token_count
// events, the running totals of the session: there a call's tokens are
// the difference between two totals (Codex may repeat a token_count event
// with the same totals, which then counts nothing).
type codexParser struct {
	st      codexState
	workdir string
}

type codexState struct {
	Mine bool `json:"mine"`
	// PerResponse: the file has token_usage_record lines, and its
	// token_count events repeat them.
	PerResponse bool       `json:"per_response,omitempty"`
	Model       string     `json:"model,omitempty"`
	Total       codexUsage `json:"total"`
}

type codexUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
}

type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type       string      `json:"type"`
		Cwd        string      `json:"cwd"`
		Model      string      `json:"model"`
		ResponseID string      `json:"response_id"`
		Usage      *codexUsage `json:"usage"`
		Info       *struct {
			Total codexUsage `json:"total_token_usage"`
			Last  codexUsage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

func newCodexParser(state, workdir string) *codexParser {
	p := &codexParser{workdir: workdir}
	_ = json.Unmarshal([]byte(state), &p.st) // "" for a new file
	return p
}

func (p *codexParser) line(b []byte, offset int64) ([]Record, bool) {
	var l codexLine
	if json.Unmarshal(b, &l) != nil {
		return nil, true
	}
	switch {
	case l.Type == "session_meta":
		p.st.Mine = sameDir(l.Payload.Cwd, p.workdir)
		return nil, p.st.Mine
	case l.Type == "turn_context" && l.Payload.Model != "":
		p.st.Model = l.Payload.Model
	case l.Type == "token_usage_record" && l.Payload.Usage != nil && p.st.Mine:
		p.st.PerResponse = true
		key := l.Payload.ResponseID
		if key == "" {
			key = "@" + strconv.FormatInt(offset, 10)
		}
		return []Record{codexRecord(key, l.Timestamp, p.st.Model, *l.Payload.Usage)}, true
	case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && p.st.Mine && !p.st.PerResponse:
		t, prev := l.Payload.Info.Total, p.st.Total
		if t.negative() {
			// Not taken as the running total: the next difference
			// would count tokens never spent.
			return []Record{forged("@" + strconv.FormatInt(offset, 10))}, true
		}
		d := codexUsage{t.Input - prev.Input, t.Cached - prev.Cached, t.CacheWrite - prev.CacheWrite,
			t.Output - prev.Output, t.Reasoning - prev.Reasoning}
		if d.Input < 0 || d.Cached < 0 || d.CacheWrite < 0 || d.Output < 0 || d.Reasoning < 0 {
			d = l.Payload.Info.Last // the totals started again (a new session in the file)
		}
		p.st.Total = t
		if d == (codexUsage{}) {
			return nil, true
		}
		return []Record{codexRecord("@"+strconv.FormatInt(offset, 10), l.Timestamp, p.st.Model, d)}, true
	}
	return nil, true
}

// codexRecord converts Codex's usage: as OpenAI counts, input_tokens
// include the cached ones, and output_tokens the reasoning ones.
func codexRecord(key string, at time.Time, model string, u codexUsage) Record {
	if u.negative() {
		return forged(key)
	}
	return Record{Key: key, At: at, Model: model, Tokens: Tokens{
		Input: max(u.Input-u.Cached, 0), CacheRead: u.Cached, CacheWrite: u.CacheWrite,
		Output: u.Output, Reasoning: u.Reasoning}}
}

func (u codexUsage) negative() bool {
	return u.Input < 0 || u.Cached < 0 || u.CacheWrite < 0 || u.Output < 0 || u.Reasoning < 0
}

// forged is the record of a line whose counts go below 0, which Read
// refuses and reports (the record files are in folders agents can write).
// The parsers that derive a count from others (input less the cached
// part, clamped at 0) return it rather than hide the sign.
func forged(key string) Record { return Record{Key: key, Tokens: Tokens{Input: -1}} }

func (p *codexParser) state() string {
	b, _ := json.Marshal(p.st)
	return string(b)
}

// geminiParser reads a Gemini CLI chat file (tmp/<project>/chats/
// session-*.jsonl): a first line with the projectHash (the SHA-256 of the
// folder), then messages, a "gemini" message with its tokens, written
// again under the same id as it grows, and "$set" lines that may carry
// the whole message list.
type geminiParser struct {
	workdir string
	mine    bool
}

type geminiMessage struct {
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Model     string    `json:"model"`
	Tokens    *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	} `json:"tokens"`
}

type geminiLine struct {
	geminiMessage
	ProjectHash *string `json:"projectHash"`
	Set         *struct {
		Messages []geminiMessage `json:"messages"`
	} `json:"$set"`
}

func newGeminiParser(state, workdir string) *geminiParser {
	return &geminiParser{workdir: workdir, mine: state == "mine"}
}

func (p *geminiParser) line(b []byte, _ int64) ([]Record, bool) {
	var l geminiLine
	if json.Unmarshal(b, &l) != nil {
		return nil, true
	}
	if l.ProjectHash != nil && l.Type == "" {
		sum := sha256.Sum256([]byte(filepath.Clean(p.workdir)))
		p.mine = *l.ProjectHash == hex.EncodeToString(sum[:])
		return nil, p.mine
	}
	var recs []Record
	if l.Set != nil {
		// A whole list (the file's start, a resume) repeats messages
		// already read: their ids keep them from counting twice.
		for _, m := range l.Set.Messages {
			if r, ok := geminiRecord(m); ok {
				recs = append(recs, r)
			}
		}
		return recs, true
	}
	if r, ok := geminiRecord(l.geminiMessage); ok {
		recs = append(recs, r)
	}
	return recs, true
}

func geminiRecord(m geminiMessage) (Record, bool) {
	if m.Type != "gemini" || m.Tokens == nil || m.ID == "" {
		return Record{}, false
	}
	t := m.Tokens
	if t.Input < 0 || t.Output < 0 || t.Cached < 0 || t.Thoughts < 0 || t.Tool < 0 {
		return forged(m.ID), true
	}
	// input is the whole prompt, cached part included; thoughts are
	// generated tokens the API counts apart from output.
	return Record{Key: m.ID, At: m.Timestamp, Model: m.Model, Tokens: Tokens{
		Input: max(t.Input-t.Cached, 0) + t.Tool, CacheRead: t.Cached,
		Output: t.Output + t.Thoughts, Reasoning: t.Thoughts}}, true
}

func (p *geminiParser) state() string {
	if p.mine {
		return "mine"
	}
	return ""
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
