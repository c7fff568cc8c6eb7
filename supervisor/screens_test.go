package supervisor

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/roles"
)

// screenFixture is one entry of testdata/screens/index.yaml, written by
// `make fixtures` (tools/realcli) from the real CLIs.
type screenFixture struct {
	File    string `yaml:"file"`
	CLI     string `yaml:"cli"`
	Version string `yaml:"version"`
	Cols    int    `yaml:"cols"`
	Rows    int    `yaml:"rows"`
	State   string `yaml:"state"`
	Shows   string `yaml:"shows"`
}

// presetRole is the role config a roles.yaml entry gets from a preset
// alone, built as the config package builds it: each pattern compiled, an
// empty one meaning none.
func presetRole(t *testing.T, cli string) config.Role {
	t.Helper()
	p, ok := roles.LookupPreset(cli)
	if !ok {
		t.Fatalf("no preset %q", cli)
	}
	compile := func(pat string) *regexp.Regexp {
		if pat == "" {
			return nil
		}
		return regexp.MustCompile(pat)
	}
	return config.Role{
		ID: cli, CLI: p.CLI, Terminal: p.Terminal,
		StartupPrompt: p.StartupPrompt, Nudge: p.Nudge, Notify: p.Notify,
		Submit: p.Submit, SubmitDelay: p.SubmitDelay, ClearInput: p.ClearInput,
		ReadyPattern: compile(p.ReadyPattern), BusyPattern: compile(p.BusyPattern),
		AttentionPattern: compile(p.AttentionPattern), LimitPattern: compile(p.LimitPattern), LimitWait: p.LimitWait,
		ReadyQuiet: p.ReadyQuiet, Restart: p.Restart, Stop: p.Stop,
	}
}

// TestRealCLIScreens replays every recorded screen of the real CLIs through
// the screen model a role uses and checks the state the CLI's preset
// derives from it. Output is taken to have been quiet for a minute: only
// the patterns decide. A role with a ready pattern is ready only while it
// shows and neither the attention nor the busy pattern does; attention wins
// over everything, busy over ready. A starting screen must not make a role
// ready: a prompt typed into it is lost or, in a dialog, picks an answer
// the CLI saves. A usage-limit message makes a role limited, until the
// reset time it names, which must be read; a dialog on screen still wins.
func TestRealCLIScreens(t *testing.T) {
	dir := filepath.Join("testdata", "screens")
	b, err := os.ReadFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatalf("read the fixture index (make fixtures writes it): %v", err)
	}
	var index struct {
		Screens []screenFixture `yaml:"screens"`
	}
	if err := yaml.Unmarshal(b, &index); err != nil {
		t.Fatalf("index.yaml: %v", err)
	}
	if len(index.Screens) == 0 {
		t.Fatal("index.yaml lists no screens")
	}
	seen := map[string]map[string]bool{}
	for _, f := range index.Screens {
		t.Run(strings.TrimSuffix(f.File, ".raw"), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				t.Fatal(err)
			}
			if f.Cols <= 0 || f.Rows <= 0 || f.Version == "" {
				t.Fatalf("index entry %+v: size or version missing", f)
			}
			want := State(f.State)
			// The state the role was in before this screen: a submitted
			// line was typed into a ready role; everything else is seen
			// on the way up.
			before, everReady := Starting, false
			switch want {
			case Busy:
				before, everReady = Ready, true
			case Limited:
				before, everReady = Busy, true
			case Ready, Attention, Starting:
			default:
				t.Fatalf("index entry %s: unknown state %q", f.File, f.State)
			}
			cfg := presetRole(t, f.CLI)
			text := ptyhost.ReplayScreen(raw, f.Cols, f.Rows).Text()
			sig := match(cfg, text)
			// As Role.watch does: a limit first, a dialog over it.
			var limit limitWatch
			now := time.Now()
			got, why := classify(cfg, sig, time.Minute, everReady, len(raw) > 0, 150*time.Millisecond, false, 0, false)
			if until, limited := limit.check(sig, now, cfg.LimitWait); limited {
				got, why = Limited, "limit pattern on screen, until "+until.Format("15:04:05")
				if sig.attention {
					got, why = Attention, "screen asks for a person"
				}
				if want == Limited && (sig.reset == "" || until.Equal(now.Add(cfg.LimitWait))) {
					t.Errorf("%s %s (%s): the limit's reset time was not read (reset group %q): limit_wait would apply\nscreen:\n%s",
						f.CLI, f.Version, f.Shows, sig.reset, text)
				}
			}
			if got == "" {
				got, why = before, "no change"
			}
			if got != want {
				t.Errorf("%s %s (%s): state %s (%s), want %s; patterns matched: attention=%v busy=%v ready=%v limits=%d\nscreen:\n%s",
					f.CLI, f.Version, f.Shows, got, why, want, sig.attention, sig.busy, sig.ready, sig.limits, text)
			}
			if seen[f.CLI] == nil {
				seen[f.CLI] = map[string]bool{}
			}
			seen[f.CLI][f.State] = true
		})
	}
	// Every CLI's first-run dialogs were recorded; Claude's and Codex's
	// composers, busy and start-up screens too, since they start offline;
	// their usage-limit messages through the scripted model.
	for _, need := range []struct{ cli, state string }{
		{"claude", "attention"}, {"claude", "ready"}, {"claude", "busy"}, {"claude", "limited"},
		{"codex", "attention"}, {"codex", "ready"}, {"codex", "busy"}, {"codex", "starting"}, {"codex", "limited"},
		{"gemini", "attention"}, {"copilot", "attention"},
	} {
		if !seen[need.cli][need.state] {
			t.Errorf("no %s screen of %s in the fixtures", need.state, need.cli)
		}
	}
}
