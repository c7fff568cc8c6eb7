package skills

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// benchTasks is the history size of the scan benchmarks, the size the
// design sets a target for (under 5 s).
const benchTasks = 100_000

// generateBench writes the benchmark history into a template database in
// b's temporary folder.
func generateBench(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "template.db")
	st, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := GenerateHistory(st, benchTasks, 1); err != nil {
		b.Fatal(err)
	}
	return path
}

// openCopy opens a fresh copy of the template history.
func openCopy(b *testing.B, template string) *store.Store {
	b.Helper()
	path := filepath.Join(b.TempDir(), "shogun.db")
	if err := copyFile(template, path); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// BenchmarkScan100k times Scan over 100,000 finished tasks from
// GenerateHistory: "first" on a history never scanned (every candidate
// new), "rescan" on one scanned before (every candidate found again).
// Generating the history takes a few seconds more, once, untimed.
func BenchmarkScan100k(b *testing.B) {
	template := generateBench(b)
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			st := openCopy(b, template)
			b.StartTimer()
			res, err := Scan(st, ScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(res.Candidates)), "candidates")
		}
	})
	b.Run("rescan", func(b *testing.B) {
		st := openCopy(b, template)
		if _, err := Scan(st, ScanOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := Scan(st, ScanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRawTokens times the tokenising of generated titles and bodies.
func BenchmarkRawTokens(b *testing.B) {
	g := newSynth(1)
	var titles, bodies []string
	n := 0
	for i := 0; i < 2000; i++ {
		r := g.task(day.Add(time.Duration(i) * time.Minute))
		titles = append(titles, r.Title)
		bodies = append(bodies, r.Body)
		n += len(r.Title) + len(r.Body)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	var (
		out  []uint64
		buf  []byte
		seen tokenSet
	)
	for i := 0; i < b.N; i++ {
		for k := range titles {
			out, buf = rawTokens(titles[k], bodies[k], &seen, out, buf)
		}
	}
}
