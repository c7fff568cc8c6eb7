//go:build !linux && !darwin && !windows

package ptyhost

func keepAwake(string) (*Inhibitor, error) { return nil, ErrNoInhibitor }
