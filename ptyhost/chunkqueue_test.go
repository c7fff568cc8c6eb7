package ptyhost

import (
	"bytes"
	"fmt"
	"testing"
)

// A consumer that keeps up sees every byte in order; one that falls behind
// sees the newest limit bytes and how many were dropped.
func TestByteQueueKeepsNewestAndCountsDropped(t *testing.T) {
	cases := []struct {
		limit  int
		pushes []string
		want   string
		drop   int64
	}{
		{10, []string{"abc", "def"}, "abcdef", 0},
		{10, []string{"abcdefgh", "ijkl"}, "cdefghijkl", 2},
		{4, []string{"ab", "cdefgh"}, "efgh", 4},
		{5, []string{"abc", "de", "f", "gh"}, "defgh", 3},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.pushes), func(t *testing.T) {
			q := newByteQueue(c.limit)
			for _, p := range c.pushes {
				q.push([]byte(p))
			}
			got, dropped, ok := q.take(nil)
			if !ok || string(got) != c.want || dropped != c.drop {
				t.Fatalf("take = %q, dropped %d, ok %v; want %q, dropped %d", got, dropped, ok, c.want, c.drop)
			}
		})
	}
}

func TestByteQueueWrapsWithoutLosingOrder(t *testing.T) {
	q := newByteQueue(1 << 16)
	var want, got bytes.Buffer
	var buf []byte
	for i := 0; i < 2000; i++ {
		p := []byte(fmt.Sprintf("line %d\n", i))
		want.Write(p)
		q.push(p)
		if i%7 == 0 {
			var ok bool
			buf, _, ok = q.take(buf)
			if !ok {
				t.Fatal("queue closed")
			}
			got.Write(buf)
		}
	}
	q.close()
	for {
		var ok bool
		buf, _, ok = q.take(buf)
		if !ok {
			break
		}
		got.Write(buf)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got %d bytes, want %d, or out of order", got.Len(), want.Len())
	}
}
