package queue

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// status.yaml is what yaml.Marshal of the status gives, byte for byte,
// whatever its roles hold (long titles yaml folds, lines, quotes, marks
// yaml would read as syntax) and however they change between rewrites,
// though only the roles that changed are marshalled again.
func TestStatusYAMLIsTheStatusMarshalled(t *testing.T) {
	at := time.Date(2026, 11, 28, 16, 0, 0, 123456789, time.UTC)
	odd := []string{"", "plain", strings.Repeat("a long title with words ", 12), strings.TrimSpace(strings.Repeat("folded words ", 20)), "line one\nline two\n", "key: value # not a comment",
		"- not a list", "'quoted' \"twice\"", "ünïcödé ✓ 漢字", "  leading and trailing  ", "yes", "012", "null", "{a: b}"}
	status := func(n, turn int) Status {
		st := Status{UpdatedAt: at.Add(time.Duration(turn) * time.Second), RunID: "run-1", Pid: 42, Tasks: map[string]int{"done": turn, "queued": 3}}
		for i := range n {
			rs := RoleStatus{ID: fmt.Sprintf("r%02d", i), Name: odd[i%len(odd)], State: "sleeping", Since: at, QueueDepth: i % 3}
			if i%4 == turn%4 { // some roles change each turn
				rs.State, rs.Pid, rs.LastOutput = "busy", 1000+i, at.Add(time.Duration(turn)*time.Millisecond)
				rs.Task = &TaskRef{ID: fmt.Sprintf("t-%d", turn), Title: odd[(i+turn)%len(odd)], Status: "delivered"}
			}
			if i%5 == 0 {
				rs.Budget, rs.LimitedUntil = odd[(i+2)%len(odd)], at.Add(time.Hour)
			}
			st.Roles = append(st.Roles, rs)
		}
		st.Recent = []ReportLine{{At: at, Role: "r01", TaskID: "t-1", Title: "roles: []", Summary: odd[3], Status: "done"}}
		st.Attention = []string{"roles: []", odd[2]}
		return st
	}
	var c statusYAML
	for turn, n := range []int{0, 1, 13, 13, 13, 40, 13, 2, 0} {
		st := status(n, turn)
		want, err := yaml.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.marshal(st)
		if err != nil {
			t.Fatalf("turn %d (%d roles): %v", turn, n, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("turn %d (%d roles): status.yaml\n%s\nwant yaml.Marshal's\n%s", turn, n, got, want)
		}
	}
}
