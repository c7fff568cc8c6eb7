package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// devices are the device files every terminal program writes to or asks
// about (ioctl): /dev/tty is the process's own controlling terminal
// whatever its number, /dev/ptmx makes a new terminal pair. Of /dev/pts
// only the role's own terminal is granted (ownTerminals): every other
// terminal of the same user is another role's or a person's, and what is
// written there is read as that screen.
var (
	deviceFiles   = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
	deviceFolders = []string{"/dev/shm"}
)

// ownTerminals are the terminals under /dev/pts that this process's
// standard input, output and error are: the role's PTY, in which the
// supervisor starts sandbox-exec before it confines itself.
func ownTerminals() []string {
	var out []string
	for fd := 0; fd <= 2; fd++ {
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil || !strings.HasPrefix(p, "/dev/pts/") || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Available says which sandbox this system offers ("Landlock ABI 7"), or
// why there is none (wrapping ErrUnavailable).
func Available() (string, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if err == nil {
			err = fmt.Errorf("ABI %d", abi)
		}
		return "", fmt.Errorf("%w: this Linux kernel offers no Landlock (%v; it needs Linux 5.13 or later with landlock in the lsm= boot list)", ErrUnavailable, err)
	}
	return fmt.Sprintf("Landlock ABI %d", abi), nil
}

// Apply restricts this process and every process it starts later to s.
// The rules are those of Landlock ABI 7 (what shogun was tested with),
// weakened where the kernel has an older ABI; they cannot be lifted.
func (s Spec) Apply() error {
	if _, err := Available(); err != nil {
		return err
	}
	hide := Resolve(s.Hide)
	rules := []landlock.Rule{
		// Every folder can be listed (see the package comment).
		landlock.PathAccess(ll.AccessFSReadDir, "/"),
		landlock.ROFiles(Beneath("/", hide)...).IgnoreIfMissing(),
		landlock.ROFiles(Resolve(s.Show)...).IgnoreIfMissing(),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(deviceFolders...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(ownTerminals()...).WithIoctlDev().IgnoreIfMissing(),
	}
	keep := append(Resolve(s.NoWrite), hide...)
	for _, w := range Resolve(s.Write) {
		// What is kept out applies inside each place granted, not to a
		// place granted inside it (the reports folder in runtime/).
		var inside []string
		for _, k := range keep {
			if k != w && within(w, k) {
				inside = append(inside, k)
			}
		}
		for _, p := range Beneath(w, inside) {
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				continue
			case fi.IsDir():
				rules = append(rules, landlock.RWDirs(p).WithRefer().IgnoreIfMissing())
			default:
				rules = append(rules, landlock.RWFiles(p).IgnoreIfMissing())
			}
		}
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	return nil
}
