package control

import (
	"encoding/json"
	"strings"
	"testing"
)

// With agent.max_running, /v1/status has slots_in_use even when no role's
// program runs (every role asleep): docs/api.md gives it with max_running.
// Without a bound, both are left out.
func TestStatusHasSlotsInUseWithMaxRunningEvenAtZero(t *testing.T) {
	for _, c := range []struct {
		st   StatusReply
		want []string
		not  []string
	}{
		{StatusReply{MaxRunning: 3}, []string{`"max_running":3`, `"slots_in_use":0`}, nil},
		{StatusReply{MaxRunning: 3, SlotsInUse: 2}, []string{`"slots_in_use":2`}, nil},
		{StatusReply{}, nil, []string{"max_running", "slots_in_use"}},
		{StatusReply{CLISlots: map[string]CLISlots{"claude": {InUse: 0, Max: 2}}},
			[]string{`"cli_slots":{"claude":{"in_use":0,"max":2}}`}, []string{"slots_in_use"}},
	} {
		out, err := json.Marshal(c.st)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("status %+v: want %s in\n%s", c.st, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(string(out), n) {
				t.Errorf("status %+v: want no %s in\n%s", c.st, n, out)
			}
		}
		var back StatusReply
		if err := json.Unmarshal(out, &back); err != nil || back.MaxRunning != c.st.MaxRunning || back.SlotsInUse != c.st.SlotsInUse {
			t.Errorf("read back: %v, %+v", err, back)
		}
	}
}
