package skills

import (
	"strings"
	"testing"
)

func TestRenderParseRoundTrip(t *testing.T) {
	docs := []Document{
		{Name: "add-react-form", Description: "Add a React form: steps. Use when a task is like \"Add a form\".", Body: "# Add a React form\n\nSteps.\n"},
		{Name: "x", Description: "colons: everywhere # and a hash, 'quotes', - dashes, [brackets], {braces}, yes", Body: "body\n"},
		{Name: "long", Description: strings.Repeat("a very long description ", 40), Body: "# T\n\n```\ncode\n```\n"},
		{Name: "jp", Description: "ログイン画面を追加する。Use when asked.", Body: "# 見出し\n"},
	}
	for _, d := range docs {
		d.Description = strings.TrimSpace(d.Description)
		out := Render(d)
		if !strings.HasPrefix(string(out), "---\nname: "+d.Name+"\ndescription: ") {
			t.Errorf("rendered front matter:\n%s", out)
		}
		if n := strings.Count(string(out[:strings.Index(string(out), "\n---\n")]), "\n"); n != 2 {
			t.Errorf("front matter of %s spans %d lines, want 3:\n%s", d.Name, n+1, out)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", d.Name, err, out)
		}
		if back != d {
			t.Errorf("round trip of %s:\n%+v\nwant\n%+v", d.Name, back, d)
		}
		crlf := strings.ReplaceAll(string(out), "\n", "\r\n")
		if back, err := Parse([]byte(crlf)); err != nil || back != d {
			t.Errorf("%s with CRLF: %+v, %v", d.Name, back, err)
		}
	}
}

func TestParseRefusesBadFiles(t *testing.T) {
	cases := map[string]string{
		"no front matter": "# Title\n",
		"unclosed":        "---\nname: a\ndescription: b\n# Title\n",
		"unknown key":     "---\nname: a\ndescription: b\nlicense: MIT\n---\nbody\n",
		"not yaml":        "---\nname: [a\n---\nbody\n",
	}
	for name, text := range cases {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("%s: parsed", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	d, err := Parse([]byte("---\n---\nbody\n"))
	if err != nil || d.Validate() == nil {
		t.Errorf("empty front matter: %+v %v; want parsed and invalid", d, err)
	}
}
