package ptyhost

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestComposeCommandLine(t *testing.T) {
	tests := []struct {
		name string
		path string
		args []string
		want string
	}{
		{"plain program", `C:\Windows\System32\cmd.exe`, nil, `C:\Windows\System32\cmd.exe`},
		{"program under Program Files", `C:\Program Files\nodejs\codex.cmd`, []string{"--dangerously-skip-permissions"},
			`"C:\Program Files\nodejs\codex.cmd" --dangerously-skip-permissions`},
		{"program with parentheses", `C:\Program Files (x86)\Tool\t.exe`, []string{"--cwd", `C:\Program Files\proj`},
			`"C:\Program Files (x86)\Tool\t.exe" --cwd "C:\Program Files\proj"`},
		{"program path is never escaped", `C:\my tools\`, nil, `"C:\my tools\"`},
		{"empty program", ``, []string{"x"}, `"" x`},
		{"empty arguments", `a.exe`, []string{"", "x", ""}, `a.exe "" x ""`},
		{"quoted words", `a.exe`, []string{`say "hi"`}, `a.exe "say \"hi\""`},
		{"lone quote", `a.exe`, []string{`"`}, `a.exe \"`},
		{"quote inside word", `a.exe`, []string{`a"b`}, `a.exe a\"b`},
		{"trailing backslash without space", `a.exe`, []string{`C:\dir\`}, `a.exe C:\dir\`},
		{"trailing backslash with space", `a.exe`, []string{`C:\my dir\`}, `a.exe "C:\my dir\\"`},
		{"two trailing backslashes with space", `a.exe`, []string{`C:\my dir\\`}, `a.exe "C:\my dir\\\\"`},
		{"backslash before quote", `a.exe`, []string{`a\"b`}, `a.exe a\\\"b`},
		{"two backslashes before quote", `a.exe`, []string{`a\\"b`}, `a.exe a\\\\\"b`},
		{"UNC path", `a.exe`, []string{`\\server\share\file.txt`}, `a.exe \\server\share\file.txt`},
		{"tab", `a.exe`, []string{"a\tb"}, "a.exe \"a\tb\""},
		{"unicode", `a.exe`, []string{`日本語 テスト`, `café`}, `a.exe "日本語 テスト" café`},
		{"JSON", `a.exe`, []string{`{"k": "v"}`}, `a.exe "{\"k\": \"v\"}"`},
		{"prompt with a path", `claude.exe`, []string{`--prompt=Read C:\Users\me\task.yaml`},
			`claude.exe "--prompt=Read C:\Users\me\task.yaml"`},
		{"shell metacharacters are not quoted", `a.exe`, []string{`a&b|c<d>e^f%g%`}, `a.exe a&b|c<d>e^f%g%`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := composeCommandLine(tt.path, tt.args)
			if got != tt.want {
				t.Fatalf("composeCommandLine(%q, %q)\n got %s\nwant %s", tt.path, tt.args, got, tt.want)
			}
			want := append([]string{tt.path}, tt.args...)
			if back := splitCommandLine(got); !slices.Equal(back, want) {
				t.Fatalf("%s splits back into %q, want %q", got, back, want)
			}
		})
	}
}

// TestCommandLineRoundTrip checks the quoting against the C runtime's parsing
// rules for many generated arguments made of the characters that matter.
func TestCommandLineRoundTrip(t *testing.T) {
	alphabet := []string{"a", "Z", " ", "\t", `"`, `\`, "é", "日", "😀", "=", "&", "%"}
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 5000 {
		path := `C:\Program Files\x.exe`
		if rng.IntN(2) == 0 {
			path = `C:\x.exe`
		}
		args := make([]string, rng.IntN(4))
		for i := range args {
			args[i] = gen()
		}
		line := composeCommandLine(path, args)
		want := append([]string{path}, args...)
		if got := splitCommandLine(line); !slices.Equal(got, want) {
			t.Fatalf("args %q -> %s -> %q", want, line, got)
		}
	}
}

// splitCommandLine parses a command line as the Microsoft C runtime (and
// CommandLineToArgvW) do: the program name up to the next quote or blank
// without escapes; then arguments where 2n backslashes before a quote are n
// backslashes and a quote that toggles quoting, 2n+1 are n backslashes and a
// literal quote, other backslashes are literal, and "" inside quotes is a
// literal quote.
func splitCommandLine(s string) []string {
	var args []string
	i := 0
	if strings.HasPrefix(s, `"`) {
		j := strings.IndexByte(s[1:], '"')
		if j < 0 {
			return []string{s[1:]}
		}
		args = append(args, s[1:1+j])
		i = 2 + j
	} else {
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return []string{s}
		}
		args = append(args, s[:j])
		i = j
	}
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return args
		}
		var b strings.Builder
		quoted := false
		for i < len(s) {
			c := s[i]
			switch {
			case (c == ' ' || c == '\t') && !quoted:
				goto next
			case c == '\\':
				n := 0
				for i < len(s) && s[i] == '\\' {
					n++
					i++
				}
				if i < len(s) && s[i] == '"' {
					b.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						b.WriteByte('"')
						i++
					}
				} else {
					b.WriteString(strings.Repeat(`\`, n))
				}
			case c == '"':
				if quoted && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				quoted = !quoted
				i++
			default:
				b.WriteByte(c)
				i++
			}
		}
	next:
		args = append(args, b.String())
	}
}

// decodeBlock splits an environment block back into its entries, checking
// its termination on the way.
func decodeBlock(t *testing.T, block []uint16) []string {
	t.Helper()
	if len(block) < 2 || block[len(block)-1] != 0 || block[len(block)-2] != 0 {
		t.Fatalf("block %v does not end in two NULs", block)
	}
	if len(block) == 2 {
		return nil
	}
	return strings.Split(string(utf16.Decode(block[:len(block)-2])), "\x00")
}

func TestEnvironmentBlock(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"sorted by name", []string{`PATH=C:\Windows`, "TERM=xterm-256color", `APPDATA=C:\Users\me\AppData\Roaming`},
			[]string{`APPDATA=C:\Users\me\AppData\Roaming`, `PATH=C:\Windows`, "TERM=xterm-256color"}},
		{"sort ignores case", []string{"b=1", "A=2", "c=3"}, []string{"A=2", "b=1", "c=3"}},
		{"later duplicate wins, in any case", []string{`Path=C:\a`, "TERM=x", `PATH=C:\b`},
			[]string{`PATH=C:\b`, "TERM=x"}},
		{"lower-case duplicate wins too", []string{"PATH=a", "path=b"}, []string{"path=b"}},
		{"underscore sorts as Windows upper-cases", []string{"A_B=1", "AB=2", "a_c=3", "ac=4"},
			[]string{"AB=2", "ac=4", "A_B=1", "a_c=3"}},
		{"per-drive entries keep their leading '='", []string{"ALLUSERSPROFILE=C:\\ProgramData", `=D:=D:\`, `=C:=C:\work`},
			[]string{`=C:=C:\work`, `=D:=D:\`, `ALLUSERSPROFILE=C:\ProgramData`}},
		{"value holding '='", []string{"OPTS=a=b", "EMPTY="}, []string{"EMPTY=", "OPTS=a=b"}},
		{"unicode", []string{"ユーザー=山田", "NAME=café", "EMOJI=😀"}, []string{"EMOJI=😀", "NAME=café", "ユーザー=山田"}},
		{"shogun role variables", []string{"TERM=xterm-256color", "SHOGUN_ROLE=ashigaru1", "SHOGUN_WORKSPACE=C:\\Users\\me\\proj", "SystemRoot=C:\\WINDOWS"},
			[]string{"SHOGUN_ROLE=ashigaru1", `SHOGUN_WORKSPACE=C:\Users\me\proj`, `SystemRoot=C:\WINDOWS`, "TERM=xterm-256color"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.env)
			block, err := environmentBlock(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeBlock(t, block); !slices.Equal(got, tt.want) {
				t.Fatalf("environmentBlock(%q) = %q, want %q", tt.env, got, tt.want)
			}
			if !slices.Equal(in, tt.env) {
				t.Fatalf("environmentBlock modified its input: %q", tt.env)
			}
		})
	}
}

func TestEnvironmentBlockLayout(t *testing.T) {
	block, err := environmentBlock([]string{"B=😀", "A=1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{'A', '=', '1', 0, 'B', '=', 0xD83D, 0xDE00, 0, 0}
	if !slices.Equal(block, want) {
		t.Fatalf("block = %#v, want %#v", block, want)
	}
	block, err = environmentBlock(nil)
	if err != nil || !slices.Equal(block, []uint16{0, 0}) {
		t.Fatalf("empty block = %v, %v; want [0 0]", block, err)
	}
}

func TestEnvironmentBlockErrors(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		message string
		secret  string // must not appear in the message
	}{
		{"no '='", []string{"TERM=x", "NOEQUALS"}, `"NOEQUALS" is not KEY=value`, ""},
		{"empty entry", []string{""}, `"" is not KEY=value`, ""},
		{"only a leading '='", []string{"=C:"}, `"=C:" is not KEY=value`, ""},
		{"NUL in value", []string{"API_KEY=sec\x00ret"}, `"API_KEY" contains a NUL`, "sec"},
		{"NUL in name", []string{"A\x00B=1"}, `contains a NUL`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := environmentBlock(tt.env)
			if err == nil {
				t.Fatalf("environmentBlock(%q) succeeded", tt.env)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %q does not say %q", err, tt.message)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("error %q shows the value", err)
			}
		})
	}
}

func TestEnvSystemRoot(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		root string
		want []string
	}{
		{"added when missing", []string{"TERM=x"}, `C:\WINDOWS`, []string{"TERM=x", `SYSTEMROOT=C:\WINDOWS`}},
		{"kept when set in another case", []string{`SystemRoot=D:\Win`}, `C:\WINDOWS`, []string{`SystemRoot=D:\Win`}},
		{"nothing to add", []string{"TERM=x"}, "", []string{"TERM=x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := withSystemRoot(tt.env, tt.root); !slices.Equal(got, tt.want) {
				t.Fatalf("withSystemRoot(%q, %q) = %q, want %q", tt.env, tt.root, got, tt.want)
			}
		})
	}

	env := make([]string, 1, 8)
	env[0] = "TERM=x"
	got := withSystemRoot(env, `C:\WINDOWS`)
	_ = append(env, "OTHER=1")
	if got[1] != `SYSTEMROOT=C:\WINDOWS` {
		t.Fatalf("withSystemRoot shares its result with the caller's slice: %q", got)
	}
}

func TestCheckWindowsBuild(t *testing.T) {
	tests := []struct {
		name                string
		major, minor, build uint32
		want                string // "" for no error
	}{
		{"Windows 10 1809", 10, 0, 17763, ""},
		{"Windows 10 22H2", 10, 0, 19045, ""},
		{"Windows 11 (reports 10.0)", 10, 0, 26100, ""},
		{"Windows Server 2019", 10, 0, 17763, ""},
		{"a later major version", 11, 0, 0, ""},
		{"Windows 10 1803", 10, 0, 17134, "ConPTY needs Windows 10 1809 (build 17763) or later; this is Windows 10.0 build 17134"},
		{"Windows 8.1", 6, 3, 9600, "ConPTY needs Windows 10 1809 (build 17763) or later; this is Windows 6.3 build 9600"},
		{"Windows 7", 6, 1, 7601, "ConPTY needs Windows 10 1809 (build 17763) or later; this is Windows 6.1 build 7601"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkWindowsBuild(tt.major, tt.minor, tt.build)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestWinConsoleCoord(t *testing.T) {
	tests := []struct {
		cols, rows int
		x, y       int16
		ok         bool
	}{
		{120, 40, 120, 40, true},
		{20, 5, 20, 5, true},
		{1000, 500, 1000, 500, true},
		{1, 1, 0, 0, false},
		{1001, 40, 0, 0, false},
		{120, 501, 0, 0, false},
		{32767, 32767, 0, 0, false},
		{0, 40, 0, 0, false},
		{120, 0, 0, 0, false},
		{-1, 5, 0, 0, false},
		{32768, 1, 0, 0, false},
		{1, 40000, 0, 0, false},
	}
	for _, tt := range tests {
		x, y, err := consoleCoord(tt.cols, tt.rows)
		if (err == nil) != tt.ok || x != tt.x || y != tt.y {
			t.Errorf("consoleCoord(%d, %d) = %d, %d, %v; want %d, %d, ok=%v", tt.cols, tt.rows, x, y, err, tt.x, tt.y, tt.ok)
		}
	}
}
