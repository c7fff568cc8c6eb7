package skills

import "testing"

// TestHashTokensAgree checks that the miner's hashing tokeniser gives the
// tokens eachToken and fold give, ASCII or not.
func TestHashTokensAgree(t *testing.T) {
	g := newSynth(3)
	texts := []string{"Fix the flaky TESTS #123, don't panic; états-généraux 東京タワー tests bus is this",
		"a I'm it's class glass virus", "Make sure the Tests pass.", ""}
	for i := 0; i < 300; i++ {
		r := g.task(day)
		texts = append(texts, r.Title, r.Body, r.Details)
	}
	for _, s := range texts {
		var want, got []uint64
		eachToken(s, nil, func(tok []byte) { want = append(want, hashToken(tok)) })
		hashTokens(s, nil, func(h uint64) { got = append(got, h) })
		if len(want) != len(got) {
			t.Fatalf("%q: %d tokens, want %d", s, len(got), len(want))
		}
		for k := range want {
			if want[k] != got[k] {
				t.Fatalf("%q: token %d differs", s, k)
			}
		}
	}
}
