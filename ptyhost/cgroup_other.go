//go:build !linux

package ptyhost

import (
	"errors"
	"syscall"
)

func delegatedCgroup() (string, error) { return "", errors.New("cgroups are Linux's") }

// intoCgroup does nothing: OpenMemoryCgroups fails off Linux, so no
// session has a cgroup.
func intoCgroup(*syscall.SysProcAttr, int) {}
