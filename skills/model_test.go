package skills

import (
	"errors"
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
