//go:build !linux

package main

import "os"

// peakRSS is not measured outside Linux, where the driver does not run.
func peakRSS(*os.ProcessState) int64 { return 0 }
