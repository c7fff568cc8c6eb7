package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// team is a roles.yaml as a person writes one: comments above, beside and
// below roles, blank lines, quoting, a block scalar holding a line that
// looks like a comment, a flow mapping, and a comment at the end.
const team = `# The team.
roles:
  # The first role.
  - id: a # line a
    name: "A"  # the name
    prompt_path: roles/a.md
    command:
      exec: "codex"
      args: []
    startup_prompt: |
      hello
      # not a comment
    # cwd: "."  (kept for later)

  # The second role.
  - id: b
    prompt_path: 'roles/b.md'
    command: {exec: x, args: []}
    enabled: true   # on
# end of the team
`

// number is what encoding/json gives for a number in the API's body.
func number(s string) any {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

// Each edit changes the lines it must and no other: the untouched role,
// the comments around both, the blank lines and the quoting stay as they
// were.
func TestEditRolesTextChangesOnlyWhatTheEditNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		edit RoleEdit
		want string // the whole text after the edit
	}{
		{
			name: "disable a role without an enabled key: the key comes after its last key, before the comment below it",
			in:   team,
			edit: RoleEdit{Op: EditDisable, ID: "a"},
			want: strings.Replace(team, "      # not a comment\n", "      # not a comment\n    enabled: false\n", 1),
		},
		{
			name: "disable a role with an enabled key: the value changes, its comment stays",
			in:   team,
			edit: RoleEdit{Op: EditDisable, ID: "b"},
			want: strings.Replace(team, "    enabled: true   # on\n", "    enabled: false # on\n", 1),
		},
		{
			name: "enable a role that is enabled: the same text",
			in:   team,
			edit: RoleEdit{Op: EditEnable, ID: "b"},
			want: strings.Replace(team, "    enabled: true   # on\n", "    enabled: true # on\n", 1),
		},
		{
			name: "delete the first role: with its head comment and the blank line after it",
			in:   team,
			edit: RoleEdit{Op: EditDelete, ID: "a"},
			want: "# The team.\nroles:\n" + team[strings.Index(team, "  # The second role."):],
		},
		{
			name: "delete the last role: with its head comment; the comment at the end stays",
			in:   team,
			edit: RoleEdit{Op: EditDelete, ID: "b"},
			want: team[:strings.Index(team, "  # The second role.")] + "# end of the team\n",
		},
		{
			name: "create a role: appended after the last one, keys in the documented order",
			in:   team,
			edit: RoleEdit{Op: EditCreate, ID: "c", Fields: map[string]any{
				"submit": "\r", "prompt_path": "roles/c.md", "startup_prompt": "line 1\nline 2\n",
				"command":  map[string]any{"env": map[string]any{}, "args": []any{"agent-sim", "--name", "a b"}, "exec": "${SHOGUN_EXE}"},
				"terminal": map[string]any{"rows": number("30"), "cols": number("100")},
				"enabled":  true,
			}},
			want: strings.Replace(team, "# end of the team\n", `  - id: c
    prompt_path: roles/c.md
    enabled: true
    command:
      exec: ${SHOGUN_EXE}
      args: [agent-sim, --name, a b]
      env: {}
    terminal:
      cols: 100
      rows: 30
    startup_prompt: |
      line 1
      line 2
    submit: "\r"
# end of the team
`, 1),
		},
		{
			name: "set a key inside a block mapping: that line only",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{"command.exec": "claude"}},
			want: strings.Replace(team, `      exec: "codex"`, `      exec: claude`, 1),
		},
		{
			name: "set keys inside a flow mapping: the mapping is written again",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"command.args": []any{"--fast"}, "command.env.TEAM": "red"}},
			want: strings.Replace(team, "command: {exec: x, args: []}", "command: {exec: x, args: [--fast], env: {TEAM: red}}", 1),
		},
		{
			name: "set, add and remove keys at once",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{
				"name": nil, "submit_delay": "1s", "startup_prompt": "Read {prompt_path}.", "ready_pattern": "› ",
			}},
			want: strings.Replace(strings.Replace(team, "    name: \"A\"  # the name\n", "", 1),
				"    startup_prompt: |\n      hello\n      # not a comment\n",
				"    startup_prompt: Read {prompt_path}.\n    submit_delay: 1s\n    ready_pattern: '› '\n", 1),
		},
		{
			name: "remove a mapping: all its lines",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{"command": nil}},
			want: strings.Replace(team, "    command:\n      exec: \"codex\"\n      args: []\n", "", 1),
		},
		{
			name: "remove a key that is not set: the same text",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"cli": nil, "terminal.cols": nil}},
			want: team,
		},
		{
			name: "strings that YAML would read as something else are quoted",
			in:   team,
			edit: RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"name": "true", "clear_input": "", "submit": "\x1b[13u"}},
			want: strings.Replace(team, "    enabled: true   # on\n", "    enabled: true   # on\n    name: \"true\"\n    submit: \"\\e[13u\"\n    clear_input: \"\"\n", 1),
		},
		{
			name: "CRLF line ends stay CRLF, in the new lines too",
			in:   strings.ReplaceAll(team, "\n", "\r\n"),
			edit: RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{"terminal.cols": number("90")}},
			want: strings.ReplaceAll(strings.Replace(team, "      # not a comment\n", "      # not a comment\n    terminal:\n      cols: 90\n", 1), "\n", "\r\n"),
		},
		{
			name: "a file without a line end at its end",
			in:   "roles:\n  - id: a\n    prompt_path: roles/a.md",
			edit: RoleEdit{Op: EditCreate, ID: "b", Fields: map[string]any{"prompt_path": "roles/b.md"}},
			want: "roles:\n  - id: a\n    prompt_path: roles/a.md\n  - id: b\n    prompt_path: roles/b.md\n",
		},
		{
			name: "a role whose first key is not its id: the first line keeps its dash",
			in:   "roles:\n  - name: Karo\n    id: karo\n    prompt_path: roles/karo.md\n",
			edit: RoleEdit{Op: EditUpdate, ID: "karo", Fields: map[string]any{"name": "家老"}},
			want: "roles:\n  - name: 家老\n    id: karo\n    prompt_path: roles/karo.md\n",
		},
		{
			name: "removing that first key writes the role again, its id first",
			in:   "roles:\n  - name: Karo\n    id: karo\n    prompt_path: roles/karo.md\n  # next\n  - id: b\n    prompt_path: roles/b.md\n",
			edit: RoleEdit{Op: EditUpdate, ID: "karo", Fields: map[string]any{"name": nil}},
			want: "roles:\n  - id: karo\n    prompt_path: roles/karo.md\n  # next\n  - id: b\n    prompt_path: roles/b.md\n",
		},
		{
			name: "a role written in flow style is written again in flow style",
			in:   "roles:\n  - {id: a, prompt_path: roles/a.md}  # short\n  - id: b\n    prompt_path: roles/b.md\n",
			edit: RoleEdit{Op: EditDisable, ID: "a"},
			want: "roles:\n  - {id: a, prompt_path: roles/a.md, enabled: false} # short\n  - id: b\n    prompt_path: roles/b.md\n",
		},
		{
			name: "four-space indentation is kept for new mappings",
			in:   "roles:\n    -   id: a\n        prompt_path: roles/a.md\n        command:\n            exec: codex\n",
			edit: RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{"restart.policy": "always"}},
			want: "roles:\n    -   id: a\n        prompt_path: roles/a.md\n        command:\n            exec: codex\n        restart:\n            policy: always\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EditRolesText([]byte(tc.in), tc.edit)
			if err != nil {
				t.Fatalf("EditRolesText: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Edits that cannot be made are refused with an error that says why, and
// the text is not changed.
func TestEditRolesTextRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		edit   RoleEdit
		target error  // errors.Is, or nil for *Errors
		want   string // in the message
		line   int    // of the *Errors' first problem, when located
	}{
		{"an unknown role", team, RoleEdit{Op: EditUpdate, ID: "c", Fields: map[string]any{"name": "C"}}, ErrRoleNotFound, `"c"`, 0},
		{"deleting an unknown role", team, RoleEdit{Op: EditDelete, ID: "c"}, ErrRoleNotFound, `"c"`, 0},
		{"creating a role that exists", team, RoleEdit{Op: EditCreate, ID: "b"}, ErrRoleExists, `"b"`, 0},
		{"changing a role's id", team, RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"id": "c"}}, nil, "id cannot be changed", 0},
		{"an id that is not one", team, RoleEdit{Op: EditCreate, ID: "Big Boss"}, nil, `invalid role id "Big Boss"`, 0},
		{"a key that is not a name", team, RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"command.": "x"}}, nil, `is not a key name`, 0},
		{"a key four levels deep", team, RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"a.b.c.d": "x"}}, nil, "at most three levels", 0},
		{"a null in a list", team, RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"command.args": []any{"a", nil}}}, nil, "holds null", 0},
		{"a file that is not YAML", "roles:\n  - id: a\n   bad: [\n", RoleEdit{Op: EditDisable, ID: "a"}, nil, "config/roles.yaml:3:4: invalid YAML", 3},
		{"a file without a roles list", "roles: 3\n", RoleEdit{Op: EditDisable, ID: "a"}, nil, `"roles" list`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := EditRolesText([]byte(tc.in), tc.edit)
			if err == nil {
				t.Fatalf("no error; text:\n%s", out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			var errs *Errors
			switch {
			case tc.target != nil && !errors.Is(err, tc.target):
				t.Errorf("error %v is not %v", err, tc.target)
			case tc.target == nil && !errors.As(err, &errs):
				t.Errorf("error %T %v is not *Errors", err, err)
			case tc.line > 0 && errs.List[0].Line != tc.line:
				t.Errorf("error at line %d, want %d: %v", errs.List[0].Line, tc.line, err)
			}
		})
	}
}

// editWorkspace is a workspace with the team above, its prompt files, and
// settings that make roles without a command run "codex".
func editWorkspace(t *testing.T, roles string) (ws, path string) {
	t.Helper()
	ws = testWorkspace(t, map[string]string{
		RolesFile: roles, "roles/a.md": "# a\n", "roles/b.md": "# b\n", "roles/c.md": "# c\n",
	})
	return ws, filepath.Join(ws, filepath.FromSlash(RolesFile))
}

// A value the strict decoder refuses is refused with its line and column
// in the file as it would have been saved, and the file is not touched.
func TestApplyRefusesInvalidValuesWithLineAndColumnAndSavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      RoleEdit
		line, col int
		message   string
	}{
		{"a number that is a word", RoleEdit{Op: EditUpdate, ID: "a", Fields: map[string]any{"terminal.cols": "wide"}}, 14, 13, `"cols" must be an integer`},
		{"a duration without a unit", RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"submit_delay": number("300")}}, 20, 19, `"submit_delay" must be a duration with a unit`},
		{"a key roles do not have", RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"colour": "red"}}, 20, 5, `unknown key "colour" in role`},
		{"a pattern that does not compile", RoleEdit{Op: EditCreate, ID: "c", Fields: map[string]any{"prompt_path": "roles/c.md", "ready_pattern": "(["}}, 22, 20, `"ready_pattern" is not a valid regular expression`},
		{"a prompt file that does not exist", RoleEdit{Op: EditCreate, ID: "c", Fields: map[string]any{"prompt_path": "roles/none.md"}}, 21, 18, `prompt file "roles/none.md" does not exist`},
		{"a role without its prompt_path", RoleEdit{Op: EditUpdate, ID: "b", Fields: map[string]any{"prompt_path": nil}}, 16, 5, `missing required key "prompt_path"`},
		{"the last role deleted", RoleEdit{Op: EditDelete, ID: "a"}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			roles := team
			if tc.edit.Op == EditDelete {
				roles = "roles:\n  - id: a\n    prompt_path: roles/a.md\n"
				tc.line, tc.col, tc.message = 1, 8, `"roles" must list at least one role`
			}
			ws, path := editWorkspace(t, roles)
			_, err := tc.edit.Apply(ws, env(nil))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Apply = %v, want *Errors", err)
			}
			found := false
			for _, e := range errs.List {
				if e.File == RolesFile && e.Line == tc.line && e.Column == tc.col && strings.Contains(e.Message, tc.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s:%d:%d: %s…; got:\n%v", RolesFile, tc.line, tc.col, tc.message, err)
			}
			if b, _ := os.ReadFile(path); string(b) != roles {
				t.Errorf("the file changed although the edit was refused:\n%s", b)
			}
		})
	}
}

// A saved edit is the text EditRolesText makes, written with the file's
// mode kept, and the configuration returned is what that file loads to.
func TestApplySavesAndReturnsTheNewConfiguration(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		in := strings.ReplaceAll(team, "\n", eol)
		ws, path := editWorkspace(t, in)
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		res, err := CreateRole(ws, env(nil), "c", map[string]any{"prompt_path": "roles/c.md", "command": map[string]any{"exec": "claude"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		want, _ := EditRolesText([]byte(in), RoleEdit{Op: EditCreate, ID: "c", Fields: map[string]any{"prompt_path": "roles/c.md", "command": map[string]any{"exec": "claude"}}})
		if string(b) != string(want) || !strings.HasPrefix(string(b), in[:strings.Index(in, "# end")]) {
			t.Errorf("saved:\n%q\nwant:\n%q", b, want)
		}
		if res.Version != FileVersion(b) {
			t.Errorf("version %s, want %s", res.Version, FileVersion(b))
		}
		if c, ok := res.Config.Role("c"); !ok || c.CLI != "claude" || !c.Enabled {
			t.Errorf("the returned configuration has role c = %+v, %v", c, ok)
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o640 && eol == "\n" && runtime.GOOS != "windows" {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
		if _, err := EnableRole(ws, env(nil), "c", false); err != nil {
			t.Fatal(err)
		}
		if _, err := UpdateRole(ws, env(nil), "a", map[string]any{"nudge": "Do {task_file}."}); err != nil {
			t.Fatal(err)
		}
		cfg := mustLoad(t, ws, nil)
		if c, _ := cfg.Role("c"); c.Enabled {
			t.Error("role c is still enabled")
		}
		if a, _ := cfg.Role("a"); a.Nudge != "Do {task_file}." {
			t.Errorf("role a's nudge = %q", a.Nudge)
		}
		if _, err := DeleteRole(ws, env(nil), "c"); err != nil {
			t.Fatal(err)
		}
		b, _ = os.ReadFile(path)
		if got := strings.Replace(string(b), "    nudge: Do {task_file}."+eol, "", 1); got != in {
			t.Errorf("after create, disable, delete and one update, the file differs from the original elsewhere:\n%q", got)
		}
	}
}

// An edit made on a file that someone else saved meanwhile is refused and
// the other writer's file is kept: checked against the version the editor
// read, and once more right before saving.
func TestApplyRefusesAFileChangedMeanwhile(t *testing.T) {
	ws, path := editWorkspace(t, team)
	seen := FileVersion([]byte(team))
	theirs := strings.Replace(team, "name: \"A\"", "name: \"Mine\"", 1)

	_, err := RoleEdit{Op: EditDisable, ID: "a"}.apply(ws, env(nil), func() {
		if err := os.WriteFile(path, []byte(theirs), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("edit while another writer saved: %v, want ErrChanged", err)
	}
	if b, _ := os.ReadFile(path); string(b) != theirs {
		t.Errorf("the other writer's file was replaced:\n%s", b)
	}
	_, err = RoleEdit{Op: EditDisable, ID: "a", Version: seen}.Apply(ws, env(nil))
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("edit made on an older version: %v, want ErrChanged", err)
	}
	if b, _ := os.ReadFile(path); string(b) != theirs {
		t.Errorf("the file was replaced:\n%s", b)
	}
	if _, err := (RoleEdit{Op: EditDisable, ID: "a", Version: FileVersion([]byte(theirs))}).Apply(ws, env(nil)); err != nil {
		t.Errorf("edit made on the current version: %v", err)
	}
}

// Whatever the file, an edit never panics, and a text it returns parses
// and holds the edit: the created role, the disabled one, the key set.
func FuzzEditRolesText(f *testing.F) {
	for _, seed := range []string{team, strings.ReplaceAll(team, "\n", "\r\n"),
		"roles:\n- id: a\n  prompt_path: x\n", "roles: [{id: a}]\n", "roles:\n  - &x {id: a}\n  - *x\n",
		"# c\nroles:\n  -\n    id: a\n    command: {exec: x}\n", "roles:\n  - id: a\n    startup_prompt: |+\n      x\n\n\n"} {
		f.Add(seed, "a", "command.exec")
	}
	f.Fuzz(func(t *testing.T, text, id, key string) {
		if !roleIDPattern.MatchString(id) {
			id = "a"
		}
		for _, e := range []RoleEdit{
			{Op: EditCreate, ID: "zz", Fields: map[string]any{"prompt_path": "p.md"}},
			{Op: EditDisable, ID: id},
			{Op: EditUpdate, ID: id, Fields: map[string]any{key: "v"}},
			{Op: EditUpdate, ID: id, Fields: map[string]any{key: nil}},
			{Op: EditDelete, ID: id},
		} {
			out, err := EditRolesText([]byte(text), e)
			if err != nil {
				continue
			}
			t2, err := parseRolesText(out)
			if err != nil {
				t.Fatalf("%s %s: the result does not parse: %v\n%q\nfrom\n%q", e.Op, e.ID, err, out, text)
			}
			if e.Op == EditCreate {
				if _, err := t2.item("zz"); err != nil {
					t.Fatalf("created role missing:\n%q", out)
				}
			}
		}
	})
}
