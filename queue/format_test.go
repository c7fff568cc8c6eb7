package queue

import (
	"reflect"
	"testing"

	"github.com/shogun-dev/shogun/store"
	"gopkg.in/yaml.v3"
)

// TestStructTagsMatchTheDecoders guards against adding a field to a struct
// and forgetting the decoder, or the other way round: what yaml.v3 writes
// from the struct tags must read back through the decoders unchanged.
func TestStructTagsMatchTheDecoders(t *testing.T) {
	c := Command{ID: "c-1", To: "ashigaru1", From: "karo", Title: "T", Body: "B\nC\n", Tags: []string{"x", "y"}, Priority: store.PriorityLow}
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCommands("c.yaml", data, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(got, []Command{c}) {
		t.Errorf("command round trip: got %+v, want %+v", got, c)
	}

	r := Report{TaskID: "t1", Status: ReportFailed, Summary: "S", Details: "D", Files: []string{"a"},
		SkillCandidate: &SkillCandidate{Name: "n", Description: "d"}}
	data, err = yaml.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	gotR, err := DecodeReport("r.yaml", data, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(gotR, r) {
		t.Errorf("report round trip: got %+v, want %+v", gotR, r)
	}
}

func TestFormatErrorLeavesOutUnknownPositions(t *testing.T) {
	for _, tt := range []struct {
		e    FormatError
		want string
	}{
		{FormatError{File: "a.yaml", Line: 3, Column: 7, Message: "m"}, "a.yaml:3:7: m"},
		{FormatError{File: "a.yaml", Line: 3, Message: "m"}, "a.yaml:3: m"},
		{FormatError{File: "a.yaml", Message: "m"}, "a.yaml: m"},
		{FormatError{Message: "m"}, "m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.e, got, tt.want)
		}
	}
}
