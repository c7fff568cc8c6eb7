// Package roles holds what shogun knows about the agents it runs before any
// configuration is read: the default role instruction files (shogun, karo,
// ashigaru, in English and Japanese) and the CLI presets that say how to type
// into Codex, Claude Code, Copilot CLI, Gemini CLI or any other terminal
// program, how to tell that it is ready, busy or waiting for a person, and
// how to stop it.
//
// The instruction files are embedded so that `shogun init` can write them into
// a new workspace; the same files in the repository's roles/ folder are the
// repository workspace's real role files, so there is one copy to keep right.
package roles

import (
	"embed"
	"fmt"
	"io/fs"
)

// The role files live next to this source so that the repository root works
// as a workspace without a copy step.
//
//go:embed shogun.md karo.md ashigaru.md ja/shogun.md ja/karo.md ja/ashigaru.md
var files embed.FS

// The kinds of role a default team is made of. Several roles may share one
// kind: ashigaru1..3 all read ashigaru.md.
const (
	KindShogun   = "shogun"
	KindKaro     = "karo"
	KindAshigaru = "ashigaru"
)

// The languages the role files are written in.
const (
	LangEnglish  = "en"
	LangJapanese = "ja"
)

// Kinds lists the role kinds that have a default instruction file, in the
// order work flows down the team.
func Kinds() []string {
	return []string{KindShogun, KindKaro, KindAshigaru}
}

// Languages lists the languages File accepts; the first is the default.
func Languages() []string {
	return []string{LangEnglish, LangJapanese}
}

// File returns the default instruction file of a role kind in a language
// ("" means English). The content is Markdown meant to be read by the agent
// itself at start-up.
func File(lang, kind string) ([]byte, error) {
	dir, err := langDir(lang)
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindShogun, KindKaro, KindAshigaru:
	default:
		return nil, fmt.Errorf("roles: unknown role kind %q (want %s, %s or %s)", kind, KindShogun, KindKaro, KindAshigaru)
	}
	name := kind + ".md"
	if dir != "." {
		name = dir + "/" + name
	}
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, fmt.Errorf("roles: read embedded %s: %w", name, err)
	}
	return b, nil
}

func langDir(lang string) (string, error) {
	switch lang {
	case "", LangEnglish:
		return ".", nil
	case LangJapanese:
		return "ja", nil
	default:
		return "", fmt.Errorf("roles: unknown language %q (want %s or %s)", lang, LangEnglish, LangJapanese)
	}
}
