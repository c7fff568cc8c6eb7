package ptyhost

import (
	"io"
	"reflect"
	"testing"
)

// A row comes as runs of one style each: a green word, a reversed one, wide
// characters once each, the trailing blanks left out.
func TestStyledRowsAreRunsOfOneStyle(t *testing.T) {
	s := newScreenModel(40, 5, io.Discard)
	defer s.close()
	s.write([]byte("top\r\n\x1b[32mWorking\x1b[0m on 将軍 \x1b[7m ok \x1b[0m   \r\n"))
	got := s.styledRows(1, 3)
	want := [][]StyledSpan{
		{{Text: "Working", FG: "#008000"}, {Text: " on 将軍 "}, {Text: " ok ", Reverse: true}},
		{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("styled rows:\n%#v\nwant:\n%#v", got, want)
	}
	if rows := s.styledRows(-3, 99); len(rows) != 5 {
		t.Errorf("rows out of range are clamped: %d rows, want 5", len(rows))
	}
}
