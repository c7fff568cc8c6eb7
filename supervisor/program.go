package supervisor

import (
	"fmt"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/roles"
)

// A role whose program cannot be found (not on PATH, no such file, not
// executable) is not restarted: a missing program does not appear by itself
// within seconds, and restarting it only fills the log. The role goes fatal
// at its first try, with a reason that names the program and the fix;
// `shogun restart ROLE` tries again once it is installed. `shogun start
// --dry-run` finds the same programs beforehand (MissingPrograms).

// MissingProgram is a role whose program cannot be found where the
// supervisor would look for it.
type MissingProgram struct {
	// Role is the role's id.
	Role string
	// Exec is the program as configured, ${VARS} expanded.
	Exec string
	// Err is os/exec's error, which names the program.
	Err error
	// Fix says what a person can do about it, in one phrase.
	Fix string
}

// MissingPrograms looks up the program of each role as starting it would
// (ptyhost.LookPath: PATH, PATHEXT on Windows, a relative path from the
// role's working folder) and returns those that cannot be found, in order.
func MissingPrograms(rcs []config.Role) []MissingProgram {
	var out []MissingProgram
	for _, rc := range rcs {
		if _, err := ptyhost.LookPath(rc.Command.Exec, rc.Command.Cwd); err != nil {
			out = append(out, MissingProgram{Role: rc.ID, Exec: rc.Command.Exec, Err: err, Fix: programFix(rc)})
		}
	}
	return out
}

// programFix says how to fix a role whose program is missing: install it
// (with npm's package name when the role's CLI preset knows it) or point
// command.exec elsewhere.
func programFix(rc config.Role) string {
	install := "install it"
	if p, ok := roles.LookupPreset(rc.CLI); ok && p.Package != "" {
		install = "install it (npm install -g " + p.Package + ")"
	}
	return install + " or change command.exec in config/roles.yaml"
}

// missingReason is why a role whose program cannot be found is fatal at once.
func missingReason(err error, rc config.Role) string {
	return fmt.Sprintf("%v; not restarted, as a missing program does not appear by itself: %s", err, programFix(rc))
}
