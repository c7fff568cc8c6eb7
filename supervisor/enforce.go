package supervisor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/config"
)

// roleCommand is what a role's program is started with: its own
// arguments and environment, and before them what shogun gives its CLI so
// that the approvals hook and shogun's MCP server reach it from outside the
// role's folder (config.CLIEnforcement), written afresh at each start. A
// role whose enforcement cannot be written is not started: its CLI would
// run unjudged. acct is the account it runs on (rc has its env already).
func (s *Supervisor) roleCommand(rc config.Role, acct config.Account) (args, env []string, err error) {
	args, env = rc.Command.Args, s.roleEnv(rc, acct)
	enf, ok, err := config.CLIEnforcement(s.layout, rc.CLI, rc.Command.Exec, rc.Command.Cwd, s.exe)
	if err != nil || !ok {
		return args, env, err
	}
	if err := enf.Write(); err != nil {
		return nil, nil, fmt.Errorf("the approvals hook for %s: %w", rc.CLI, err)
	}
	args = append(slices.Clone(enf.Args), args...)
	for _, kv := range enf.Env {
		key, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		env = append(env, kv)
	}
	return args, env, nil
}
