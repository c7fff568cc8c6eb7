package ptyhost

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The scrollback keeps exactly the last size bytes of the output, oldest
// first, whatever the sizes of the pieces it came in: while it grows, when
// it becomes a ring and after it wrapped.
func TestScrollbackKeepsTheLastBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 7, 4096, 5000, 1 << 16} {
		r := NewScrollback(size)
		var all []byte
		for i := 0; len(all) < 3*size+10; i++ {
			n := rng.IntN(2*size/3 + 2)
			if i%17 == 0 {
				n = size + rng.IntN(3) // a piece as large as the ring, or larger
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte('a' + rng.IntN(26))
			}
			_, _ = r.Write(p)
			all = append(all, p...)
			want := all[max(0, len(all)-size):]
			if got := r.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("size %d, after %d bytes in %d pieces: kept %d bytes %q…, want the last %d", size, len(all), i+1, len(got), got[:min(len(got), 20)], len(want))
			}
		}
	}
}

// A role that printed little holds little: the scrollback grows with the
// output rather than taking its whole size at the start, which a team
// under agent.max_running paid at every start of a role.
func TestScrollbackGrowsWithTheOutput(t *testing.T) {
	r := NewScrollback(1 << 20)
	_, _ = r.Write(bytes.Repeat([]byte("x"), 3000))
	r.mu.Lock()
	held := cap(r.buf)
	r.mu.Unlock()
	if held > 16<<10 {
		t.Errorf("3000 bytes of output hold %d bytes of scrollback, want at most 16 KiB", held)
	}
}
