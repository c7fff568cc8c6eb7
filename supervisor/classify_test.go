package supervisor

import (
	"regexp"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
)

func TestClassify(t *testing.T) {
	withPattern := config.Role{
		ReadyPattern:     regexp.MustCompile(`› `),
		BusyPattern:      regexp.MustCompile(`esc to interrupt`),
		AttentionPattern: regexp.MustCompile(`Do you trust`),
		ReadyQuiet:       2 * time.Second,
	}
	quietOnly := config.Role{ReadyQuiet: 2 * time.Second}
	settle := 150 * time.Millisecond
	cases := []struct {
		name      string
		cfg       config.Role
		screen    string
		quiet     time.Duration
		everReady bool
		noOutput  bool
		want      State
	}{
		{"prompt shown and settled", withPattern, "› ", time.Second, false, false, Ready},
		{"prompt shown but output still arriving", withPattern, "› ", 10 * time.Millisecond, false, false, Starting},
		{"working after being ready", withPattern, "Working… (esc to interrupt)\n› ", time.Minute, true, false, Busy},
		{"busy pattern before first ready", withPattern, "esc to interrupt", time.Minute, false, false, Starting},
		{"busy pattern beside the prompt is not ready", withPattern, "Waiting (esc to interrupt)\n› ", time.Minute, true, false, Busy},
		{"trust dialog wins over everything", withPattern, "Do you trust the files?\n› esc to interrupt", 0, true, false, Attention},
		{"trust dialog with a prompt-like cursor", withPattern, "Do you trust the files?\n› 1. Yes", time.Minute, false, false, Attention},
		{"no prompt yet, however long it is quiet", withPattern, "loading", time.Hour, false, false, ""},
		{"no prompt after work: stays as it was", withPattern, "thinking", time.Hour, true, false, ""},
		{"no prompt and not quiet long enough", withPattern, "loading", time.Second, false, false, ""},
		{"quiet role: fresh output after ready is busy", quietOnly, "x", 500 * time.Millisecond, true, false, Busy},
		{"quiet role: one quiet second, not yet ready", quietOnly, "x", 1500 * time.Millisecond, true, false, ""},
		{"quiet role: ready after ready_quiet", quietOnly, "x", 2 * time.Second, true, false, Ready},
		{"quiet role: never ready before the first output", quietOnly, "", time.Hour, false, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := classify(c.cfg, match(c.cfg, c.screen), c.quiet, c.everReady, !c.noOutput, settle, false, 0, false)
			if got != c.want {
				t.Errorf("classify = %q, want %q", got, c.want)
			}
		})
	}
}

func TestBackoffDoublesToTheCap(t *testing.T) {
	b := RestartBackoff{Base: time.Second, Max: 60 * time.Second, Jitter: func() float64 { return 0.5 }}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for i, w := range want {
		if got := b.Delay(i + 1); got != w*time.Second {
			t.Errorf("delay %d = %v, want %v", i+1, got, w*time.Second)
		}
	}
	lo, hi := RestartBackoff{Base: time.Second, Max: time.Minute, Jitter: func() float64 { return 0 }}, RestartBackoff{Base: time.Second, Max: time.Minute, Jitter: func() float64 { return 0.999 }}
	if lo.Delay(1) != 800*time.Millisecond || hi.Delay(1) < 1190*time.Millisecond {
		t.Errorf("jitter range = %v..%v, want 0.8 s..1.2 s", lo.Delay(1), hi.Delay(1))
	}
}

// Gemini CLI queues a prompt submitted while it still starts and shows it
// under "Queued (press ↑ to edit):" with its composer ready: the role is
// busy until the queue is sent, so the next text is not joined to it.
func TestGeminiWithAQueuedPromptIsBusy(t *testing.T) {
	cfg := presetRole(t, "gemini")
	screen := "ℹ Initializing... Prompts will be queued.\n\n  Queued (press ↑ to edit):\n    Read roles/ashigaru.md and follow it from now on.\n\n > Type your message or @path/to/file\n"
	if got, why := classify(cfg, match(cfg, screen), time.Minute, true, true, 150*time.Millisecond, false, 0, false); got != Busy {
		t.Errorf("classify = %q (%s), want busy", got, why)
	}
	ready := " * Type your message or @path/to/file\n"
	if got, why := classify(cfg, match(cfg, ready), time.Minute, true, true, 150*time.Millisecond, false, 0, false); got != Ready {
		t.Errorf("the composer in yolo mode: classify = %q (%s), want ready", got, why)
	}
}
