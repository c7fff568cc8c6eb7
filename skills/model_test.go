package skills

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestDecodeOneRecordOfAChunk(t *testing.T) {
	const base = 3 << recordShift
	recs := []*record{
		{seq: base + 1, id: "20261123-001", role: "ashigaru1", status: codeDone, finished: 7, title: 11,
			tags: []uint64{2, 5}, set: []uint64{3, 9, 40}, cluster: gidCluster<<60 | 4},
		{seq: base + 2, id: "20261123-002", role: "ashigaru2", status: codeOpen},
		{seq: base + 9, id: "20261123-009", role: "karo", status: codeFailed, set: []uint64{1, 2},
			prop: 77, propName: "release-notes", propDoc: "write the notes"},
	}
	var chunk []byte
	for _, r := range recs {
		chunk = appendRecord(chunk, base, r)
	}
	all, err := decodeRecords(base, chunk)
	if err != nil || !reflect.DeepEqual(all, recs) {
		t.Fatalf("decodeRecords = %+v, %v; want the records written", all, err)
	}
	for _, want := range recs {
		got, err := decodeRecordsOf(base, chunk, want.seq)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("record %d alone = %+v, %v; want %+v", want.seq, got, err, want)
		}
	}
	if got, err := decodeRecordsOf(base, chunk, base+5); err != nil || len(got) != 0 {
		t.Errorf("a seq not in the chunk = %+v, %v; want nothing, no error", got, err)
	}

	// Damaged chunks are refused, never trusted for a length.
	for name, bad := range map[string][]byte{
		"cut short": chunk[:len(chunk)-3],
		"huge count": append(appendRecord(nil, base, &record{seq: base, id: "x", role: "r"})[:8],
			0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		for _, only := range []int64{-1, base + 9} {
			if _, err := decodeRecordsOf(base, bad, only); !errors.Is(err, errCorrupt) {
				t.Errorf("%s (only %d): err = %v, want errCorrupt", name, only, err)
			}
		}
	}
}

// TestSketchMayShare: the bound read from two sketches is the sum over the
// bins of the smaller count, none when a bin is full in both, and never
// below the tokens two sets really share.
func TestSketchMayShare(t *testing.T) {
	slow := func(a, b sketch, need int) bool {
		bound := 0
		for bin := 0; bin < 32; bin++ {
			x, y := int(a[bin/2]>>(4*(bin%2))&15), int(b[bin/2]>>(4*(bin%2))&15)
			switch {
			case x == 15 && y == 15:
				return true
			case x == 15:
				bound += y
			case y == 15:
				bound += x
			default:
				bound += min(x, y)
			}
		}
		return bound >= need
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 20000; n++ {
		var a, b sketch
		for i := range a {
			// Mostly small counts, some full bins.
			a[i] = byte(rng.IntN(5)) | byte(rng.IntN(5))<<4
			b[i] = byte(rng.IntN(5)) | byte(rng.IntN(5))<<4
			if rng.IntN(20) == 0 {
				a[i] |= 0x0f << (4 * rng.IntN(2))
			}
			if rng.IntN(20) == 0 {
				b[i] |= 0x0f << (4 * rng.IntN(2))
			}
		}
		for _, need := range []int{0, 1, 10, 30, 60, 100, 200} {
			if got, want := a.mayShare(b, need), slow(a, b, need); got != want {
				t.Fatalf("mayShare(%x, %x, %d) = %v, want %v", a, b, need, got, want)
			}
		}
	}
	// Sets that share tokens always may.
	for n := 0; n < 2000; n++ {
		var x, y []uint64
		shared := rng.IntN(40)
		for i := 0; i < shared; i++ {
			tok := rng.Uint64()
			x, y = append(x, tok), append(y, tok)
		}
		for i := rng.IntN(40); i > 0; i-- {
			x = append(x, rng.Uint64())
		}
		for i := rng.IntN(40); i > 0; i-- {
			y = append(y, rng.Uint64())
		}
		if !sketchOf(x).mayShare(sketchOf(y), shared) {
			t.Fatalf("sets sharing %d tokens: mayShare says they cannot", shared)
		}
	}
}
