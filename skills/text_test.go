package skills

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormTitle(t *testing.T) {
	cases := map[string]string{
		"Fix flaky test #123.":           "fix flaky test",
		"fix the flaky tests":            "fix flaky test",
		"FIX: Flaky-Test (ticket 4711)":  "fix flaky test ticket",
		"Add a login page (part 2 of 3)": "add login page part",
		"Update the README":              "update readme",
		"v2 API: rename status field":    "v2 api rename status field",
		"ログイン画面を追加":                      "ログ グイ イン ン画 画面 面を を追 追加",
		"  ":                             "",
	}
	for in, want := range cases {
		if got := normTitle(in); got != want {
			t.Errorf("normTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlugAndValidName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Add React form", "add-react-form"},
		{"deploy_preview--env", "deploy-preview-env"},
		{"  Crème brûlée!  ", "creme-brulee"},
		{"ログイン", ""},
		{"-x-", "x"},
		{strings.Repeat("word ", 20), strings.TrimSuffix(strings.Repeat("word-", 12), "-")},
	}
	for _, c := range cases {
		got := Slug(c.in)
		if got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
		if got != "" {
			if err := ValidName(got); err != nil {
				t.Errorf("Slug(%q) = %q is not a valid name: %v", c.in, got, err)
			}
		}
	}
	for _, bad := range []string{"", "Add", "a--b", "-a", "a-", "a_b", "a b", strings.Repeat("a", 65), "é"} {
		if ValidName(bad) == nil {
			t.Errorf("ValidName(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"a", "add-react-form", "v2", strings.Repeat("a", 64)} {
		if err := ValidName(good); err != nil {
			t.Errorf("ValidName(%q): %v", good, err)
		}
	}
	if ValidDescription(strings.Repeat("x", 1025)) == nil || ValidDescription(" ") == nil || ValidDescription(strings.Repeat("é", 1024)) != nil {
		t.Error("ValidDescription: wrong limits")
	}
}

func TestPaths(t *testing.T) {
	text := "Edit web/src/forms/SignupForm.tsx and `./api/handlers/`; see https://example.com/a/b.\n" +
		"Run make in the Makefile, touch main.go, not e.g. and/or, N/A, 3/4 or v1.2.\n" +
		"(docs/setup.md), [config/settings.yaml]"
	want := []string{"web/src/forms/SignupForm.tsx", "./api/handlers/", "Makefile", "main.go", "docs/setup.md", "config/settings.yaml"}
	if got := paths(text); !reflect.DeepEqual(got, want) {
		t.Errorf("paths = %q\nwant   %q", got, want)
	}
}

func TestFragments(t *testing.T) {
	h := newTokDict()
	text := "Add a login page to the web app: a form with email and password,\n" +
		"server-side validation, and a test for both.\n\n" +
		"Steps:\n" +
		"1. Create the form. Wire it to the API.\n" +
		"- [ ] Write the tests\n" +
		"```\nnpm test\n```\n" +
		"# Notes\n" +
		"Do not commit the .env file.\n"
	var got []string
	var warn []bool
	for _, f := range h.fragmentsOf(text) {
		got = append(got, f.text)
		warn = append(warn, f.warning)
	}
	want := []string{
		"Add a login page to the web app: a form with email and password, server-side validation, and a test for both.",
		"Create the form.", "Wire it to the API.", "Write the tests", "Do not commit the .env file.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fragments %q\nwant      %q", got, want)
	}
	if !reflect.DeepEqual(warn, []bool{false, false, false, false, true}) {
		t.Errorf("warnings %v", warn)
	}
}

func TestIsWarning(t *testing.T) {
	for s, want := range map[string]bool{
		"Do not run it twice":           true,
		"Don't run it twice":            true,
		"Careful: the cache":            true,
		"Whenever it runs, it is fine":  false,
		"The ratio is noted":            false,
		"NEVER push to main":            true,
		"Avoidance of doubt is a thing": false,
	} {
		if got := isWarning(s); got != want {
			t.Errorf("isWarning(%q) = %v", s, got)
		}
	}
}

func TestTitlePhrase(t *testing.T) {
	common := map[string]bool{"add": true, "react": true, "form": true}
	cases := map[string]string{
		"Add a React form for signup":    "Add a React form",
		"Please add a React form":        "add a React form",
		"Add a React form (part 1 of 3)": "Add a React form",
		"Add form: React":                "Add form",
		"Something else entirely":        "Something else entirely",
	}
	for in, want := range cases {
		if got := titlePhrase(in, common); got != want {
			t.Errorf("titlePhrase(%q) = %q, want %q", in, got, want)
		}
	}
}
