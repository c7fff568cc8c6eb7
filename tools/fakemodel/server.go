package fakemodel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Server is the scripted model server. Set its fields, then Start it; the
// zero value listens on a free port of 127.0.0.1 and logs nowhere.
type Server struct {
	// Addr is where to listen; it must be a loopback address. Empty means
	// 127.0.0.1:0 (a free port).
	Addr string
	// Log, when set, gets one line per request (see Request.String).
	Log io.Writer
	// DumpDir, when set, gets every request body as
	// <n>-<api>.json, with secrets in headers left out, for finding out
	// what a CLI sends.
	DumpDir string
	// Now tells the time, for limit windows and reset times; nil is
	// time.Now.
	Now func() time.Time
	// WindowUsed, when set, says how much of its usage window (in percent)
	// the credential key (Request.Key) has used: Responses API answers
	// then carry Codex's rate-limit headers (x-codex-primary-used-percent
	// and its window and reset), which Codex records in its rollout's
	// token_count events. ok false: no headers, as without it.
	WindowUsed func(key string) (percent float64, ok bool)

	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu       sync.Mutex
	requests []Request
	limits   map[string]time.Time // first 429 of a limit directive, by task and step
	owners   map[string]string    // the credential a first-key limit is for, by task and step
	seq      int                  // for unique ids
}

// Request is what the server records of one request.
type Request struct {
	Time   time.Time
	Method string
	// Path is the URL path with its query, secrets redacted.
	Path string
	// API is "anthropic", "responses", "chat", "gemini", or "" for a
	// request no API took (HEAD /, an unknown path).
	API   string
	Model string
	// Tools are the tool names offered, as the model must call them (a
	// Codex namespace's tools as namespace/name).
	Tools []string
	// Step says what the server answered: "read task", "directive 2: write
	// hello.txt", "text", "json", "limit", "error: …".
	Step string
	// Status is the HTTP status answered.
	Status int
	// InputTokens and OutputTokens are the usage the answer reported:
	// a quarter of the request body's bytes, and a quarter of the
	// answer's text (or tool name and arguments), each at least 1; 0 for
	// a request not answered by a model.
	InputTokens, OutputTokens int
	// Key tells apart the credentials a request came with (a short hash
	// of its API key or bearer token; "" for none), so that a test can
	// give each role its own key and sum what each was served.
	Key string
	// Header holds the request's headers, secrets redacted.
	Header http.Header
	// Typed counts the lines a person (or the supervisor) typed that the
	// conversation holds: more than one shows a conversation resumed or
	// carried on, not started afresh.
	Typed int
}

func (r Request) String() string {
	s := fmt.Sprintf("%s %s %s api=%s status=%d", r.Time.Format("15:04:05.000"), r.Method, r.Path, orDash(r.API), r.Status)
	if r.Model != "" {
		s += " model=" + r.Model
	}
	if r.Step != "" {
		s += fmt.Sprintf(" step=%q", r.Step)
	}
	if r.InputTokens+r.OutputTokens > 0 {
		s += fmt.Sprintf(" in=%d out=%d", r.InputTokens, r.OutputTokens)
	}
	if r.Key != "" {
		s += " key=" + r.Key
	}
	if r.Typed > 1 {
		s += fmt.Sprintf(" typed=%d", r.Typed)
	}
	if len(r.Tools) > 0 {
		s += " tools=" + strings.Join(r.Tools, ",")
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Start listens and serves until Close or until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fakemodel: listen on %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("fakemodel: listen on %q: not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakemodel: listen: %w", err)
	}
	if s.DumpDir != "" {
		if err := os.MkdirAll(s.DumpDir, 0o755); err != nil {
			ln.Close()
			return fmt.Errorf("fakemodel: dump folder: %w", err)
		}
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.srv.Close()
		case <-s.done:
		}
	}()
	return nil
}

// URL is the server's base URL, http://127.0.0.1:PORT, without a slash at
// the end. Anthropic and Gemini clients take it as it is; OpenAI clients
// want URL()+"/v1".
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops the server and waits for it.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	<-s.done
	return err
}

// Requests returns a copy of the requests recorded so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// nextID returns a new id with the prefix, unique in this server.
func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%d%06d", prefix, s.now().UnixNano()%1e6, s.seq)
}

// limitStart returns when the limit directive with this key first answered
// 429, starting it now if it did not yet.
func (s *Server) limitStart(key string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits == nil {
		s.limits = map[string]time.Time{}
	}
	t, ok := s.limits[key]
	if !ok {
		t = s.now()
		s.limits[key] = t
	}
	return t
}

// limitOwner returns the credential that first met the limit directive
// with this key, making it key if none did yet.
func (s *Server) limitOwner(limit, key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil {
		s.owners = map[string]string{}
	}
	if o, ok := s.owners[limit]; ok {
		return o
	}
	s.owners[limit] = key
	return key
}

// ServeHTTP routes a request to its API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &Request{Time: s.now(), Method: r.Method, Path: redactQuery(r.URL), Header: redactHeader(r.Header), Key: credentialKey(r)}
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		rec.Status = sw.status
		if rec.Status == 0 {
			rec.Status = http.StatusOK
		}
		s.record(*rec)
	}()
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		rec.Step = "error: read body: " + err.Error()
		http.Error(sw, err.Error(), http.StatusBadRequest)
		return
	}
	var a api
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages") && !strings.Contains(p, "count_tokens"):
		a = anthropicAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		a = responsesAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		a = chatAPI{}
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") &&
		(strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		a = geminiAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(p, ":countTokens"):
		rec.API, rec.Step = "gemini", "count tokens"
		writeJSON(sw, http.StatusOK, map[string]any{"totalTokens": len(body) / 4})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		rec.API, rec.Step = "anthropic", "count tokens"
		writeJSON(sw, http.StatusOK, map[string]any{"input_tokens": len(body) / 4})
		return
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		rec.Step = "models"
		writeJSON(sw, http.StatusOK, modelList())
		return
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && p == "/"):
		sw.WriteHeader(http.StatusOK)
		return
	default:
		rec.Step = "not found"
		http.Error(sw, "fakemodel: no such endpoint: "+r.Method+" "+p, http.StatusNotFound)
		return
	}
	rec.API = a.name()
	s.dump(rec, body)
	req, err := a.parse(r, body)
	if err != nil {
		rec.Step = "error: " + err.Error()
		a.writeError(sw, http.StatusBadRequest, "fakemodel: "+err.Error())
		return
	}
	rec.Model = req.Model
	req.Key = rec.Key
	rec.Typed = typedCount(req.Messages)
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.String())
	}
	st := s.decide(req)
	rec.Step = st.Note
	if !st.Reset.IsZero() {
		a.writeLimit(sw, st.Reset)
		return
	}
	st.In, st.Out = max(len(body)/4, 1), max(len(answerText(st))/4, 1)
	rec.InputTokens, rec.OutputTokens = st.In, st.Out
	out := &stream{w: sw, delay: st.Delay}
	a.write(out, s, req, st)
}

// answerText is what the answer's output tokens are counted from.
func answerText(st step) string {
	if st.Call != nil {
		return st.Call.Tool.Name + st.Call.argsJSON() + st.Call.Input
	}
	return st.Text
}

// CredentialKey is the key of requests made with the API key or token
// secret (Request.Key): what a limit directive's "for" names.
func CredentialKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:4])
}

// credentialKey is a short hash of the request's API key or bearer token.
func credentialKey(r *http.Request) string {
	v := r.Header.Get("x-api-key")
	for _, h := range []string{"Authorization", "x-goog-api-key"} {
		if v == "" {
			v = r.Header.Get(h)
		}
	}
	if v == "" {
		v = r.URL.Query().Get("key")
	}
	if v == "" {
		return ""
	}
	return CredentialKey(strings.TrimPrefix(v, "Bearer "))
}

// Served sums the tokens answered per credential key (Request.Key).
func (s *Server) Served() map[string]Tokens {
	out := map[string]Tokens{}
	for _, r := range s.Requests() {
		if r.InputTokens+r.OutputTokens == 0 {
			continue
		}
		t := out[r.Key]
		t.Input += r.InputTokens
		t.Output += r.OutputTokens
		t.Calls++
		out[r.Key] = t
	}
	return out
}

// Tokens are what the server reported answering for one key.
type Tokens struct {
	Input, Output, Calls int
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	if s.Log != nil {
		fmt.Fprintln(s.Log, r.String())
	}
}

func (s *Server) dump(rec *Request, body []byte) {
	if s.DumpDir == "" {
		return
	}
	s.mu.Lock()
	n := len(s.requests) + 1
	s.mu.Unlock()
	var v any
	if json.Unmarshal(body, &v) != nil {
		v = string(body)
	}
	b, _ := json.MarshalIndent(map[string]any{"method": rec.Method, "path": rec.Path, "header": rec.Header, "body": v}, "", "  ")
	_ = os.WriteFile(filepath.Join(s.DumpDir, fmt.Sprintf("%03d-%s.json", n, rec.API)), b, 0o644)
}

// statusWriter remembers the status written and lets a stream flush.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// secretHeaders are left out of logs and dumps.
var secretHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization"}

func redactHeader(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range secretHeaders {
		if out.Get(k) != "" {
			out.Set(k, "REDACTED")
		}
	}
	return out
}

var secretQuery = regexp.MustCompile(`(?i)^(key|api_key|apikey|access_token|token)$`)

func redactQuery(u *url.URL) string {
	q := u.Query()
	if len(q) == 0 {
		return u.Path
	}
	for k := range q {
		if secretQuery.MatchString(k) {
			q.Set(k, "REDACTED")
		}
	}
	return u.Path + "?" + q.Encode()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func modelList() any {
	ids := []string{"fake-model", "gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro"}
	var data []map[string]any
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "fakemodel",
			"type": "model", "display_name": id})
	}
	return map[string]any{"object": "list", "data": data}
}

// stream writes server-sent events. A slow directive makes it pause once,
// after the first event, sending SSE comments every second meanwhile so
// that the connection stays alive.
type stream struct {
	w      *statusWriter
	delay  time.Duration
	began  bool
	paused bool
}

// event writes one event; name may be empty (data-only SSE).
func (st *stream) event(name string, data any) {
	if !st.began {
		st.w.Header().Set("Content-Type", "text/event-stream")
		st.w.Header().Set("Cache-Control", "no-cache")
		st.w.WriteHeader(http.StatusOK)
		st.began = true
	}
	var buf bytes.Buffer
	if name != "" {
		fmt.Fprintf(&buf, "event: %s\n", name)
	}
	switch d := data.(type) {
	case string:
		fmt.Fprintf(&buf, "data: %s\n\n", d)
	default:
		b, _ := json.Marshal(d)
		fmt.Fprintf(&buf, "data: %s\n\n", b)
	}
	_, _ = st.w.Write(buf.Bytes())
	st.w.Flush()
	if !st.paused && st.delay > 0 {
		st.paused = true
		for end := time.Now().Add(st.delay); time.Now().Before(end); {
			time.Sleep(min(time.Second, time.Until(end)))
			_, _ = io.WriteString(st.w, ": fakemodel is slow\n\n")
			st.w.Flush()
		}
	}
}

// wait sleeps out a slow directive's time before a non-streaming answer.
func (st *stream) wait() {
	if st.delay > 0 {
		time.Sleep(st.delay)
	}
}

// errNoAPI is returned by parse for a body that is not the API's.
var errNoAPI = errors.New("body is not a request of this API")
