//go:build !windows

package ptyhost

// procLink is one process on the way up from a client to init: its parent
// and its session.
type procLink struct{ pid, ppid, sid int }

// Holds walks pid's ancestry: pid is in the tree when it or an ancestor is
// the child, or is in the child's session (the child leads its own).
func (p *unixProcess) Holds(pid int) (bool, error) {
	root := p.Pid()
	links, err := lineage(pid)
	if err != nil {
		return false, err
	}
	for _, l := range links {
		if l.pid == root || l.sid == root {
			return true, nil
		}
	}
	return false, nil
}
