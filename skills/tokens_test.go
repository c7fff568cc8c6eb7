package skills

import (
	"math/rand/v2"
	"testing"
)

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

// tokenNumbers gives back every number it was given, through its growth,
// for the hash 0 too, and nothing for a hash it was not given.
func TestTokenNumbers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tn tokenNumbers
	want := map[uint64]int32{}
	hashes := []uint64{0, 1, 1 << 63}
	for len(hashes) < 5000 {
		hashes = append(hashes, r.Uint64()&0xffff_ffff_0000_ffff) // colliding low bits
	}
	for i, h := range hashes {
		if _, ok := want[h]; ok {
			continue
		}
		if _, ok := tn.get(h); ok {
			t.Fatalf("hash %x found before it was put", h)
		}
		tn.put(h, int32(i))
		want[h] = int32(i)
	}
	for h, n := range want {
		if got, ok := tn.get(h); !ok || got != n {
			t.Fatalf("hash %x: got %d, %v; want %d", h, got, ok, n)
		}
	}
	for _, h := range []uint64{12345, 1<<63 | 1, 0xdead_beef} {
		if _, put := want[h]; !put {
			if _, ok := tn.get(h); ok {
				t.Fatalf("hash %x was never put, but found", h)
			}
		}
	}
}
