package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// goBenchmarks runs the packages' Go benchmarks and keeps their output.
func goBenchmarks(r *report) error {
	out, err := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", "1s", "./ptyhost/", "./supervisor/").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "pkg:") {
			keep = append(keep, l)
		}
	}
	r.add("Go benchmarks", "```\n"+strings.Join(keep, "\n")+"\n```")
	return nil
}
