//go:build !linux

package ptyhost

import "errors"

func delegatedCgroup() (string, error) { return "", errors.New("cgroups are Linux's") }
