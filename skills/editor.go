package skills

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// EditorCommand returns the command that opens path in the user's editor:
// $EDITOR, else $VISUAL, else notepad on Windows and vi elsewhere. On Unix
// the variable is run by /bin/sh, as git runs it, so it may carry
// arguments ("code --wait"). On Windows it is split at spaces unless it
// names an existing file as a whole ("C:\Program Files\...\editor.exe").
// getenv is os.Getenv in real use. The caller connects the terminal.
func EditorCommand(path string, getenv func(string) string) *exec.Cmd {
	editor := strings.TrimSpace(getenv("EDITOR"))
	if editor == "" {
		editor = strings.TrimSpace(getenv("VISUAL"))
	}
	if runtime.GOOS == "windows" {
		if editor == "" {
			return exec.Command("notepad", path)
		}
		if fi, err := os.Stat(strings.Trim(editor, `"`)); err == nil && !fi.IsDir() {
			return exec.Command(strings.Trim(editor, `"`), path)
		}
		f := strings.Fields(editor)
		return exec.Command(f[0], append(f[1:], path)...)
	}
	if editor == "" {
		editor = "vi"
	}
	return exec.Command("/bin/sh", "-c", editor+` "$1"`, editor, path)
}

// PagerCommand returns the command that shows a text given on its standard
// input a page at a time: $PAGER (run by /bin/sh on Unix, as git runs it,
// split at spaces on Windows), else less -R, which keeps colours. It
// returns nil when there is none: no $PAGER and no less in PATH. getenv is
// os.Getenv in real use. The caller connects the terminal.
func PagerCommand(getenv func(string) string) *exec.Cmd {
	pager := strings.TrimSpace(getenv("PAGER"))
	switch {
	case pager != "" && runtime.GOOS == "windows":
		f := strings.Fields(pager)
		return exec.Command(f[0], f[1:]...)
	case pager != "":
		return exec.Command("/bin/sh", "-c", pager)
	}
	if less, err := exec.LookPath("less"); err == nil {
		return exec.Command(less, "-R")
	}
	return nil
}
