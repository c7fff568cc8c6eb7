package ptyhost

import (
	"bytes"
	"io"
	"testing"
)

var benchText = bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"), 512)

// BenchmarkScreenModel is the VT emulator's throughput on plain text lines:
// the cost the screen consumer pays per byte it takes in.
func BenchmarkScreenModel(b *testing.B) {
	s := newScreenModel(120, 40, io.Discard)
	defer s.close()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		s.write(benchText)
	}
}

// BenchmarkScrollback is the in-line cost of the reader's scrollback copy.
func BenchmarkScrollback(b *testing.B) {
	r := NewScrollback(1 << 20)
	chunk := benchText[:4096]
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = r.Write(chunk)
	}
}

// BenchmarkChunkQueue is the reader's cost of handing a chunk to a consumer
// that keeps up.
func BenchmarkByteQueue(b *testing.B) {
	q := newByteQueue(1 << 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for {
			var ok bool
			if buf, _, ok = q.take(buf); !ok {
				return
			}
		}
	}()
	chunk := benchText[:4096]
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		q.push(chunk)
	}
	q.close()
	<-done
}
