//go:build !linux && !windows

package ptyhost

func treeMemory([]Process) ([]uint64, error) { return nil, ErrNoProcessTree }

func memoryLimited(Process) bool { return false }

func memoryLimitReached(Process) bool { return false }
