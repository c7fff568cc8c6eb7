package queue

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Files written on Windows (Notepad, PowerShell's Set-Content, git with
// core.autocrlf) end their lines with CRLF. They mean what the same file
// with LF means: no carriage return reaches a title, a body or a summary,
// where it would be typed into an agent's terminal as an extra Enter.

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestCRLFCommandsMeanTheSameAsLF(t *testing.T) {
	for name, src := range map[string]string{
		"one command": `id: cmd-042
to: ashigaru1
from: karo
title: Add the login form
body: |
  Create src/login.tsx
  with a form.

  Then run the tests.
tags: [frontend, forms]
priority: high
`,
		"a list": `commands:
  - to: ashigaru1
    title: "First: quoted"
    body: >
      folded text
      on two lines
  - to: ashigaru2
    title: Second
    body: "double\nquoted"
`,
	} {
		t.Run(name, func(t *testing.T) {
			lf, err := DecodeCommands("cmd.yaml", []byte(src), Limits{})
			if err != nil {
				t.Fatalf("LF: %v", err)
			}
			cr, err := DecodeCommands("cmd.yaml", []byte(crlf(src)), Limits{})
			if err != nil {
				t.Fatalf("CRLF: %v", err)
			}
			// Derived ids hash the file's bytes; the rest must be equal.
			for i := range cr {
				if lf[i].ID != "cmd-042" {
					cr[i].ID, lf[i].ID = "", ""
				}
			}
			if !reflect.DeepEqual(lf, cr) {
				t.Errorf("CRLF file decodes differently:\n LF   %q\n CRLF %q", lf, cr)
			}
			for _, c := range cr {
				if strings.Contains(c.Title+c.Body, "\r") {
					t.Errorf("carriage return kept in %q / %q", c.Title, c.Body)
				}
			}
		})
	}
}

func TestCRLFReportMeansTheSameAsLF(t *testing.T) {
	src := `task_id: t-20261122-0001
status: done
summary: Login form added
details: |
  Added the form.
  Tests pass.
files: [src/login.tsx]
skill_candidate:
  name: add-react-form
  description: When asked to add a form to the React app
`
	lf, err := DecodeReport("r.yaml", []byte(src), Limits{})
	if err != nil {
		t.Fatalf("LF: %v", err)
	}
	cr, err := DecodeReport("r.yaml", []byte(crlf(src)), Limits{})
	if err != nil {
		t.Fatalf("CRLF: %v", err)
	}
	if !reflect.DeepEqual(lf, cr) {
		t.Errorf("CRLF report decodes differently:\n LF   %+v\n CRLF %+v", lf, cr)
	}
	if strings.Contains(cr.Summary+cr.Details, "\r") {
		t.Errorf("carriage return kept: %q / %q", cr.Summary, cr.Details)
	}
}

// A mistake in a CRLF file is reported at the line a person sees it on.
func TestCRLFErrorsNameTheRightLine(t *testing.T) {
	src := crlf("to: ashigaru1\ntitle: Fine\nbody: text\npriority: urgent\n")
	_, err := DecodeCommands("cmd.yaml", []byte(src), Limits{})
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a FormatError", err)
	}
	if fe.Line != 4 || fe.Column != 11 {
		t.Errorf("error at %d:%d, want 4:11: %v", fe.Line, fe.Column, err)
	}
}
