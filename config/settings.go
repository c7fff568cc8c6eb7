package config

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/usage"
)

// The PTY backends settings.yaml may name (pty.backend).
const (
	// BackendAuto uses the platform's pseudo-terminal.
	BackendAuto = "auto"
	// BackendConPTY names Windows' ConPTY. It is accepted on Unix too and
	// means the native PTY there, so the seed's Windows settings file loads
	// unchanged on Linux and macOS.
	BackendConPTY = "conpty"
	// BackendUnix names the Unix PTY; on Windows it means ConPTY.
	BackendUnix = "unix"
)

// Settings are the workspace-wide values of config/settings.yaml. Paths are
// absolute after Load; in the file they are relative to the workspace and may
// not leave it.
type Settings struct {
	PTY      PTYSettings
	Agent    AgentSettings
	UI       UISettings
	Data     DataSettings
	Terminal TerminalSettings
	Skills   SkillsSettings
	Logs     LogSettings
	Queue    QueueSettings
	Notify   NotifySettings
	// Approvals tune how questions of the approvals policy are answered
	// (approvals:).
	Approvals ApprovalSettings
	// KeepAwake keeps the machine from sleeping while any role is busy
	// (keep_awake, default true).
	KeepAwake bool
	// Usage tunes how tokens are priced (usage:).
	Usage UsageSettings
	// Accounts are the pools of accounts roles share (accounts:).
	Accounts AccountSettings
}

// UsageSettings tune the cost estimate of `shogun usage` and bound what
// the team may spend (usage:).
type UsageSettings struct {
	// Prices add to or replace entries of the shipped price table
	// (usage.prices: model name prefix → input, output, cache_read,
	// cache_write in US dollars per million tokens).
	Prices map[string]usage.Price
	// Budgets are the daily budgets of the team and of roles
	// (usage.budgets; default none): at 80 % a person is told, at 100 %
	// no new task is typed to the role (or to any, for the team's).
	Budgets usage.Budgets
}

// NotifySettings say how a person is told when something needs them
// (notify:); see package notify for the events.
type NotifySettings struct {
	// Command is run once per event with the event's JSON on its standard
	// input (notify.command, an argv list; default none).
	Command []string
	// Webhook receives an HTTP POST of the same JSON (notify.webhook, an
	// http or https URL such as an ntfy topic; default none).
	Webhook string
}

// ApprovalSettings tune the approvals of config/policy.yaml (approvals:).
type ApprovalSettings struct {
	// Timeout is how long an action the policy asks about waits for a
	// person's answer; unanswered, it is denied (approvals.timeout,
	// default 2m, at most MaxApprovalTimeout).
	Timeout time.Duration
}

// MaxApprovalTimeout bounds approvals.timeout: a CLI's hook waits this long
// at most (the hook configuration shogun writes gives it a little more).
const MaxApprovalTimeout = 30 * time.Minute

// PTYSettings choose the pseudo-terminal implementation (pty:).
type PTYSettings struct {
	// Backend is BackendAuto (default), BackendConPTY or BackendUnix.
	Backend string
}

// AgentSettings hold defaults for roles (agent:).
type AgentSettings struct {
	// DefaultCommand runs roles that have no command key
	// (agent.default_command; default: codex in the workspace).
	DefaultCommand Command
	// IdleAfter puts a role to sleep once its CLI has been ready, with
	// nothing typed and nothing queued, this long (agent.idle_after; 0,
	// the default, never); a role's idle_after overrides it.
	IdleAfter time.Duration
	// MaxRunning bounds how many roles' CLIs are alive at once
	// (agent.max_running; 0, the default, means no bound).
	MaxRunning int
	// MemoryMax bounds the memory of each role's whole process tree
	// (agent.memory_max; 0, the default, no bound); a role's memory_max
	// overrides it. Over it the role is restarted (supervisor).
	MemoryMax ByteSize
	// MaxRunningPerCLI bounds, per CLI preset (claude, codex, gemini …),
	// how many roles of that CLI are alive at once, within MaxRunning
	// (agent.max_running_per_cli, e.g. {claude: 2}; a CLI not named has
	// no bound of its own). Keys are preset names, lower case.
	MaxRunningPerCLI map[string]int
}

// UISettings place the web console that `shogun start` serves (ui:).
type UISettings struct {
	Host string // ui.host, default "localhost"
	Port int    // ui.port, default 5173
	// Enabled serves the console (ui.enabled, default true).
	Enabled bool
	// AllowRemote permits a ui.host that is not a loopback address
	// (ui.allow_remote, default false): the console types into agents
	// that run code, so listening beyond this machine is a choice made
	// explicitly.
	AllowRemote bool
}

// DataSettings locate the history database and bound what it keeps (data:).
type DataSettings struct {
	// SQLitePath is data.sqlite_path (default data/shogun.db).
	SQLitePath string
	// Retain is how long events and log records are kept (data.retain,
	// default 90 days; "90d" or a Go duration in the file; 0 keeps them
	// forever). Tasks, reports and skills are always kept.
	Retain time.Duration
}

// TerminalSettings control optional terminal windows (terminal:).
type TerminalSettings struct {
	WindowsTerminal WindowsTerminalSettings
}

// WindowsTerminalSettings control opening a Windows Terminal tab per role
// (terminal.windows_terminal:), a convenience on Windows that does nothing
// elsewhere.
type WindowsTerminalSettings struct {
	Enabled bool // default false
}

// SkillsSettings control skill mining and export (skills:).
type SkillsSettings struct {
	// Enabled turns skill mining on (default true).
	Enabled bool
	// CodexPath and CopilotPath are where exports go (default skills/codex
	// and skills/copilot).
	CodexPath, CopilotPath string
	// AutoCandidateThreshold is how many similar finished tasks make a
	// candidate (default 2).
	AutoCandidateThreshold int
	// Similarity is the token similarity, in (0, 1], above which two tasks
	// count as near-duplicates (default 0.6).
	Similarity float64
}

// LogSettings bound what a role's output may take on disk and in memory
// (logs:).
type LogSettings struct {
	MaxSizeMB    int // a role log is rotated at this size (default 20)
	MaxFiles     int // rotated logs kept per role (default 5)
	ScrollbackKB int // output kept in memory per role for attach and screen (default 1024)
}

// QueueSettings tune the file protocol (queue:).
type QueueSettings struct {
	// Settle is how long a file's size and mtime must stay unchanged before
	// it is read, for writers that do not rename (default 25ms).
	Settle time.Duration
	// ReportGrace is how long a report file stays where its agent wrote it
	// after shogun has read it (default 10s; 0 archives it at once). A CLI
	// that writes a file and then looks at it (Claude Code's Write tool
	// renames its temporary file into place, then stats it) must not be
	// told that its report failed because shogun was quicker.
	ReportGrace time.Duration
	// MaxFileBytes rejects larger command and report files (default 1 MiB).
	MaxFileBytes int64
	// Rescan is the period of the safety-net folder scan (default 3s).
	Rescan time.Duration
	// MaxHops bounds a chain of commands each sent by a role working on the
	// previous one's task (default 8): agents that hand work back and forth
	// forever are stopped.
	MaxHops int
	// MaxExchanges is a rate limit: the most commands between the same two
	// roles within ten minutes (default 300), loops or not; loops are
	// judged within a chain (the queue's loop guard).
	MaxExchanges int
}

// defaultSettings are the values of keys absent from settings.yaml, with
// paths still relative.
func defaultSettings() Settings {
	return Settings{
		PTY: PTYSettings{Backend: BackendAuto},
		Agent: AgentSettings{DefaultCommand: Command{
			Exec: "codex", Args: []string{}, Env: map[string]string{}, Cwd: ".",
		}},
		UI:     UISettings{Host: "localhost", Port: 5173, Enabled: true},
		Data:   DataSettings{SQLitePath: "data/shogun.db", Retain: 90 * 24 * time.Hour},
		Skills: SkillsSettings{Enabled: true, CodexPath: "skills/codex", CopilotPath: "skills/copilot", AutoCandidateThreshold: 2, Similarity: 0.6},
		Logs:   LogSettings{MaxSizeMB: 20, MaxFiles: 5, ScrollbackKB: 1024},
		Queue:  QueueSettings{Settle: 25 * time.Millisecond, ReportGrace: 10 * time.Second, MaxFileBytes: 1 << 20, Rescan: 3 * time.Second, MaxHops: 8, MaxExchanges: 300},
		Notify: NotifySettings{Command: []string{}},

		Approvals: ApprovalSettings{Timeout: 2 * time.Minute},

		KeepAwake: true,
	}
}

// loadSettings reads settings.yaml; a missing file means all defaults.
// budgetRoles are the key nodes of the roles usage.budgets names, checked
// against roles.yaml once it is read.
func loadSettings(files fileReader, lookup func(string) (string, bool)) (s Settings, budgetRoles map[string]*yaml.Node) {
	s = defaultSettings()
	if data, err := files.read(SettingsFile); err == nil {
		budgetRoles = decodeSettings(data, &s, files.workspace, lookup, files.errs)
	}
	s.resolve(files.workspace)
	return s, budgetRoles
}

func decodeSettings(data []byte, s *Settings, workspace string, lookup func(string) (string, bool), errs *Errors) (budgetRoles map[string]*yaml.Node) {
	start := len(errs.List)
	defer errs.sortFrom(start)
	d := &decoder{file: SettingsFile, errs: errs}
	root := d.parse(data)
	if root == nil {
		return
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "expected a mapping of settings at the top, got %s", yamlstrict.Describe(root))
		return
	}
	m := d.mapping(root, "", "settings")
	defer m.done()

	if sec := d.section(m, "pty"); sec != nil {
		if v := sec.take("backend"); v != nil {
			if b, ok := d.enum(v, "backend", BackendAuto, BackendConPTY, BackendUnix); ok {
				s.PTY.Backend = b
			}
		}
		sec.done()
	}
	if sec := d.section(m, "agent"); sec != nil {
		if v := sec.take("default_command"); v != nil {
			if c, ok := d.command(v, "default_command", "agent.default_command", workspace, lookup); ok {
				s.Agent.DefaultCommand = c
			}
		}
		if v := sec.take("idle_after"); v != nil {
			if d, ok := d.idleAfter(v, "idle_after"); ok {
				s.Agent.IdleAfter = d
			}
		}
		if v := sec.take("max_running"); v != nil {
			if n, ok := d.integer(v, "max_running", 0, 10_000); ok {
				s.Agent.MaxRunning = int(n)
			}
		}
		if v := sec.take("memory_max"); v != nil {
			if n, ok := d.memoryMax(v, "memory_max"); ok {
				s.Agent.MemoryMax = n
			}
		}
		if v := sec.take("max_running_per_cli"); v != nil {
			s.Agent.MaxRunningPerCLI = d.perCLI(v)
		}
		sec.done()
	}
	if sec := d.section(m, "ui"); sec != nil {
		if v := sec.take("host"); v != nil {
			if h, ok := d.str(v, "host"); ok {
				if h == "" {
					d.errorf(v, "%q must not be empty", "host")
				}
				s.UI.Host = h
			}
		}
		if v := sec.take("port"); v != nil {
			if p, ok := d.integer(v, "port", 1, 65535); ok {
				s.UI.Port = int(p)
			}
		}
		if v := sec.take("enabled"); v != nil {
			if b, ok := d.boolean(v, "enabled"); ok {
				s.UI.Enabled = b
			}
		}
		if v := sec.take("allow_remote"); v != nil {
			if b, ok := d.boolean(v, "allow_remote"); ok {
				s.UI.AllowRemote = b
			}
		}
		sec.done()
	}
	if sec := d.section(m, "data"); sec != nil {
		d.pathKey(sec, "sqlite_path", &s.Data.SQLitePath)
		if v := sec.take("retain"); v != nil {
			if x, ok := d.days(v, "retain"); ok {
				s.Data.Retain = x
			}
		}
		sec.done()
	}
	if sec := d.section(m, "terminal"); sec != nil {
		if v := sec.take("windows_terminal"); v != nil {
			if wt := d.mapping(v, "windows_terminal", "terminal.windows_terminal"); wt != nil {
				if x := wt.take("enabled"); x != nil {
					if b, ok := d.boolean(x, "enabled"); ok {
						s.Terminal.WindowsTerminal.Enabled = b
					}
				}
				wt.done()
			}
		}
		sec.done()
	}
	if sec := d.section(m, "skills"); sec != nil {
		if v := sec.take("enabled"); v != nil {
			if b, ok := d.boolean(v, "enabled"); ok {
				s.Skills.Enabled = b
			}
		}
		d.pathKey(sec, "codex_path", &s.Skills.CodexPath)
		d.pathKey(sec, "copilot_path", &s.Skills.CopilotPath)
		if v := sec.take("auto_candidate_threshold"); v != nil {
			if n, ok := d.integer(v, "auto_candidate_threshold", 1, math.MaxInt32); ok {
				s.Skills.AutoCandidateThreshold = int(n)
			}
		}
		if v := sec.take("similarity"); v != nil {
			if f, ok := d.fraction(v, "similarity"); ok {
				s.Skills.Similarity = f
			}
		}
		sec.done()
	}
	if sec := d.section(m, "logs"); sec != nil {
		for _, f := range []struct {
			key string
			dst *int
		}{
			{"max_size_mb", &s.Logs.MaxSizeMB},
			{"max_files", &s.Logs.MaxFiles},
			{"scrollback_kb", &s.Logs.ScrollbackKB},
		} {
			if v := sec.take(f.key); v != nil {
				if n, ok := d.integer(v, f.key, 1, math.MaxInt32); ok {
					*f.dst = int(n)
				}
			}
		}
		sec.done()
	}
	if sec := d.section(m, "queue"); sec != nil {
		if v := sec.take("settle"); v != nil {
			if x, ok := d.duration(v, "settle", true); ok {
				s.Queue.Settle = x
			}
		}
		if v := sec.take("report_grace"); v != nil {
			if x, ok := d.duration(v, "report_grace", true); ok {
				s.Queue.ReportGrace = x
			}
		}
		if v := sec.take("max_file_bytes"); v != nil {
			if n, ok := d.integer(v, "max_file_bytes", 1, math.MaxInt64); ok {
				s.Queue.MaxFileBytes = n
			}
		}
		if v := sec.take("rescan"); v != nil {
			if x, ok := d.duration(v, "rescan", false); ok {
				s.Queue.Rescan = x
			}
		}
		for _, f := range []struct {
			key string
			dst *int
		}{
			{"max_hops", &s.Queue.MaxHops},
			{"max_exchanges", &s.Queue.MaxExchanges},
		} {
			if v := sec.take(f.key); v != nil {
				if n, ok := d.integer(v, f.key, 1, 10_000); ok {
					*f.dst = int(n)
				}
			}
		}
		sec.done()
	}
	if sec := d.section(m, "notify"); sec != nil {
		if v := sec.take("command"); v != nil {
			if argv, ok := d.strList(v, "command"); ok {
				if len(argv) == 0 || argv[0] == "" {
					d.errorf(v, "%q needs a program: a list like [\"/usr/local/bin/tell-me\", \"--json\"]", "command")
				} else {
					s.Notify.Command = argv
				}
			}
		}
		if v := sec.take("webhook"); v != nil {
			if raw, ok := d.str(v, "webhook"); ok && raw != "" {
				if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					d.errorf(v, "%q must be an http or https URL, got %q", "webhook", raw)
				} else {
					s.Notify.Webhook = raw
				}
			}
		}
		sec.done()
	}
	if sec := d.section(m, "approvals"); sec != nil {
		if v := sec.take("timeout"); v != nil {
			if x, ok := d.duration(v, "timeout", false); ok {
				if x > MaxApprovalTimeout {
					d.errorf(v, "%q must be at most %s, got %q", "timeout", MaxApprovalTimeout, v.Value)
				} else {
					s.Approvals.Timeout = x
				}
			}
		}
		sec.done()
	}
	if sec := d.section(m, "usage"); sec != nil {
		if v := sec.take("prices"); v != nil {
			s.Usage.Prices = d.prices(v)
		}
		if v := sec.take("budgets"); v != nil {
			s.Usage.Budgets, budgetRoles = d.budgets(v)
		}
		sec.done()
	}
	if sec := d.section(m, "accounts"); sec != nil {
		s.Accounts = d.accountSettings(sec, lookup)
		sec.done()
	}
	if v := m.take("keep_awake"); v != nil {
		if b, ok := d.boolean(v, "keep_awake"); ok {
			s.KeepAwake = b
		}
	}
	return budgetRoles
}

// prices reads usage.prices: per model name prefix, a mapping of the four
// prices, each a number of dollars per million tokens (0 or more).
func (d *decoder) prices(n *yaml.Node) map[string]usage.Price {
	models := d.mapping(n, "prices", "usage.prices")
	if models == nil {
		return nil
	}
	out := map[string]usage.Price{}
	for _, name := range models.all() {
		pm := d.mapping(models.vals[name], name, "usage.prices."+name)
		if pm == nil {
			continue
		}
		var p usage.Price
		for _, f := range []struct {
			key string
			dst *float64
		}{{"input", &p.Input}, {"output", &p.Output}, {"cache_read", &p.CacheRead}, {"cache_write", &p.CacheWrite}} {
			v := pm.take(f.key)
			if v == nil {
				continue
			}
			tag := v.ShortTag()
			x, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || tag != "!!float" && tag != "!!int" || err != nil || math.IsNaN(x) || x < 0 || math.IsInf(x, 0) {
				d.errorf(v, "%q must be a number of dollars per million tokens, 0 or more, got %s", f.key, yamlstrict.Describe(v))
				continue
			}
			*f.dst = x
		}
		pm.done()
		out[name] = p
	}
	return out
}

// perCLI reads agent.max_running_per_cli: per CLI preset name, a number
// of roles, 1 or more. A name that is no preset is an error, as in a
// role's cli:, so a typo does not leave a CLI unbounded unseen.
func (d *decoder) perCLI(n *yaml.Node) map[string]int {
	m := d.mapping(n, "max_running_per_cli", "agent.max_running_per_cli")
	if m == nil {
		return nil
	}
	out := map[string]int{}
	for _, name := range m.all() {
		cli := strings.ToLower(strings.TrimSpace(name))
		if _, ok := roles.LookupPreset(cli); !ok {
			d.errorf(m.keys[name], "unknown CLI %q in agent.max_running_per_cli (CLIs: %s)", name, strings.Join(roles.PresetNames(), ", "))
			continue
		}
		if v, ok := d.integer(m.vals[name], name, 1, 10_000); ok {
			out[cli] = int(v)
		}
	}
	return out
}

// section takes a top-level settings key whose value is a mapping.
func (d *decoder) section(m *mapping, key string) *mapping {
	v := m.take(key)
	if v == nil {
		return nil
	}
	return d.mapping(v, key, key)
}

// pathKey reads a path that must stay inside the workspace: shogun writes
// there, and a settings file copied from elsewhere must not make it write
// outside the folder a person chose.
func (d *decoder) pathKey(m *mapping, key string, dst *string) {
	v := m.take(key)
	if v == nil {
		return
	}
	s, ok := d.str(v, key)
	if !ok {
		return
	}
	clean, problem := checkRelPath(key, s)
	if problem != "" {
		d.errorf(v, "%s", problem)
		return
	}
	*dst = clean
}

// resolve makes the path keys absolute.
func (s *Settings) resolve(workspace string) {
	s.Data.SQLitePath = absPath(workspace, s.Data.SQLitePath)
	s.Skills.CodexPath = absPath(workspace, s.Skills.CodexPath)
	s.Skills.CopilotPath = absPath(workspace, s.Skills.CopilotPath)
	if s.Agent.DefaultCommand.Cwd == "." {
		s.Agent.DefaultCommand.Cwd = workspace
	}
}
