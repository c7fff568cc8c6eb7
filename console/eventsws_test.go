package console

import (
	"testing"
)

// The bridge reads the text/event-stream format as browsers do: events end
// at a blank line, data lines join with newlines, comments and unknown
// fields are skipped, an event without a name is a "message", and data
// that is not JSON goes as a JSON string.
func TestEventWriterReadsTheEventStreamFormat(t *testing.T) {
	var got []string
	w := &eventWriter{code: 200}
	w.sendFn = func(msg []byte) error {
		got = append(got, string(msg))
		return nil
	}
	stream := ": keep-alive\n\n" +
		"event: status\ndata: {\"roles\":[]}\n\n" +
		"event: role\r\ndata: {\"id\":\"a\",\r\ndata: \"state\":\"busy\"}\r\n\r\n" +
		"id: 7\nretry: 10\ndata: plain text\n\n" +
		"event: task\ndata: {\"id\":\"t-1\"}\n"
	// Written in pieces that split lines anywhere, as a handler may.
	for i := 0; i < len(stream); i += 7 {
		if _, err := w.Write([]byte(stream[i:min(i+7, len(stream))])); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`{"event":"status","data":{"roles":[]}}`,
		`{"event":"role","data":{"id":"a","state":"busy"}}`, // joined by a newline, which JSON allows
		`{"event":"message","data":"plain text"}`,
	}
	if len(got) != len(want) {
		t.Fatalf("sent %d messages, want %d (an event without its blank line waits): %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d = %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := w.Write([]byte("\n")); err != nil || len(got) != 4 || got[3] != `{"event":"task","data":{"id":"t-1"}}` {
		t.Errorf("the last event, once ended: %q, %v", got, err)
	}
}
