//go:build !linux && !windows && !darwin

package ptyhost

import "net/netip"

// lineage is not read on these systems: their process tables are not
// read here (see identity in sys_bsd.go).
func lineage(int) ([]procLink, error) { return nil, ErrNoProcessTree }

func leftBehind(int) (bool, error) { return false, nil }

func loopbackOwners(netip.Addr, uint16, netip.Addr, uint16) ([]int, error) {
	return nil, ErrNoProcessTree
}

func environ(int) ([]string, error) { return nil, ErrNoProcessTree }
