package config

import (
	"strings"
	"testing"
)

// memory_max comes from agent.memory_max unless a role sets its own (0, no
// bound, included), in decimal or binary units.
func TestMemoryMaxDefaultsAndOverrides(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: "agent:\n  memory_max: 2GB\n",
		RolesFile: "roles:\n" +
			"  - {id: a, prompt_path: roles/a.md, command: {exec: claude}}\n" +
			"  - {id: b, prompt_path: roles/a.md, command: {exec: codex}, memory_max: 512MiB}\n" +
			"  - {id: c, prompt_path: roles/a.md, command: {exec: gemini}, memory_max: 300MB}\n" +
			"  - {id: d, prompt_path: roles/a.md, command: {exec: my-agent}, memory_max: 0}\n",
	})
	cfg := mustLoad(t, dir, nil)
	for id, want := range map[string]ByteSize{"a": 2_000_000_000, "b": 512 << 20, "c": 300_000_000, "d": 0} {
		r, _ := cfg.Role(id)
		if r.MemoryMax != want {
			t.Errorf("%s: memory_max %d, want %d", id, r.MemoryMax, want)
		}
	}
}

// A size a person cannot mean is refused with its line and what to write,
// and so is one no CLI can live in (below 16 MB).
func TestMemoryMaxBadSizes(t *testing.T) {
	for _, bad := range []string{"300", "2 lots", "GB", "-1GB", "1e3MB", "0x10MB", "true", "[1]", "9999TB", "1KB", "15MiB", "1B"} {
		dir := testWorkspace(t, map[string]string{
			"roles/a.md": "a",
			RolesFile:    "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: claude}, memory_max: " + bad + "}\n",
		})
		_, err := Load(dir, env(nil))
		if err == nil {
			t.Errorf("memory_max %s: loaded", bad)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "memory_max") || !strings.Contains(msg, "roles.yaml:2:") {
			t.Errorf("memory_max %s: error %q does not name the key and its line", bad, msg)
		}
	}
}

func TestByteSizeReadsAsWritten(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ByteSize
		text string
	}{
		{"2GB", 2e9, "2 GB"},
		{"512MiB", 512 << 20, "512 MiB"},
		{"300MB", 3e8, "300 MB"},
		{"1.5G", 3 << 29, "1.5 GiB"},
		{" 64 kb ", 64e3, "64 KB"},
		{"0", 0, "0 B"},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want || got.String() != c.text {
			t.Errorf("ParseSize(%q) = %d (%s), %v; want %d (%s)", c.in, got, got, err, c.want, c.text)
		}
	}
	if got := ByteSize(2_300_000_000).Like(2e9); got != "2.3 GB" {
		t.Errorf("2.3e9 like 2GB = %q", got)
	}
	if got := ByteSize(612 << 20).Like(512 << 20); got != "612 MiB" {
		t.Errorf("612 MiB like 512MiB = %q", got)
	}
}

// The floor holds for agent.memory_max too, and its error says what it is.
func TestMemoryMaxBelowTheFloorIsRefused(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: "agent:\n  memory_max: 1KB\n",
		RolesFile:    "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: claude}, memory_max: 16MB}\n",
	})
	_, err := Load(dir, env(nil))
	const want = `config/settings.yaml:2:15: "memory_max" 1 KB is below 16 MB: no CLI runs in so little (0 for no bound)`
	if err == nil || err.Error() != want {
		t.Errorf("agent.memory_max 1KB: %v; want %s", err, want)
	}
}
