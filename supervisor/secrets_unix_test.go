//go:build !windows

package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envRole is a roles.yaml entry whose program writes its environment to
// out, then waits.
func envRole(id, out, accounts string) string {
	return `
  - id: ` + id + `
    name: "` + id + `"
    prompt_path: roles/` + id + `.md
    command: {exec: /bin/sh, args: ["-c", "env > ` + out + `.tmp && mv ` + out + `.tmp ` + out + `; exec sleep 60"]}
    cli: generic
` + accounts
}

// Each role's program gets the key of the account it runs on and no
// other account's: not another role's, not a settings pool's it does not
// use, and a role without accounts none. (An agent reads its own
// environment: sandboxed or not, it would find every key there.)
func TestRoleSeesOnlyItsOwnAccountsKey(t *testing.T) {
	t.Setenv("SHOGUN_TEST_KEY_A", "alpha-secret")
	t.Setenv("SHOGUN_TEST_KEY_B", "beta-secret")
	t.Setenv("SHOGUN_TEST_KEY_POOL", "pool-secret")
	t.Setenv("SHOGUN_TEST_PLAIN", "kept")
	dir := t.TempDir()
	out := func(id string) string { return filepath.Join(dir, id+".env") }
	ws := testWorkspace(t, "roles:"+
		envRole("ra", out("ra"), "    accounts:\n      - {name: one, env: {MY_API_KEY: \"${SHOGUN_TEST_KEY_A}\"}}\n")+
		envRole("rb", out("rb"), "    accounts:\n      - {name: one, env: {MY_API_KEY: \"${SHOGUN_TEST_KEY_B}\"}}\n")+
		envRole("rc", out("rc"), ""))
	settings := "accounts:\n  pools:\n    spare:\n      - {name: p, env: {OTHER_TOKEN: \"${SHOGUN_TEST_KEY_POOL}\"}}\n"
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, ws, nil)
	envOf := func(id string) string {
		var b []byte
		waitFor(t, id+"'s environment written", 20*time.Second, func() bool {
			var err error
			b, err = os.ReadFile(out(id))
			return err == nil
		})
		return string(b)
	}
	for _, tc := range []struct {
		id         string
		want, none []string
	}{
		{"ra", []string{"MY_API_KEY=alpha-secret", "SHOGUN_TEST_KEY_A=alpha-secret", "SHOGUN_TEST_PLAIN=kept"}, []string{"beta-secret", "pool-secret"}},
		{"rb", []string{"MY_API_KEY=beta-secret", "SHOGUN_TEST_KEY_B=beta-secret", "SHOGUN_TEST_PLAIN=kept"}, []string{"alpha-secret", "pool-secret"}},
		{"rc", []string{"SHOGUN_TEST_PLAIN=kept"}, []string{"alpha-secret", "beta-secret", "pool-secret"}},
	} {
		env := envOf(tc.id)
		for _, w := range tc.want {
			if !strings.Contains(env, w+"\n") {
				t.Errorf("%s's environment lacks %s", tc.id, w)
			}
		}
		for _, n := range tc.none {
			if strings.Contains(env, n) {
				t.Errorf("%s's environment holds another account's key %q", tc.id, n)
			}
		}
	}
}
