package skills

import (
	"slices"
	"strings"
)

// A token is known by a 64-bit hash of its folded text (FNV-1a): the state
// keeps no token text. Two tokens with the same hash would count as one;
// among a million distinct tokens that happens with odds of about one in
// forty million.
func hashToken(tok []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range tok {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// rawTokens returns the hashes of the tokens of a task's title and body,
// sorted, without repeats, appended to out[:0].
func rawTokens[T string | []byte](title, body T, out []uint64, buf []byte) ([]uint64, []byte) {
	out = out[:0]
	add := func(tok []byte) { out = append(out, hashToken(tok)) }
	buf = eachToken(title, buf, add)
	buf = eachToken(body, buf, add)
	slices.Sort(out)
	return slices.Compact(out), buf
}

// commonTokenShare and commonTokenMin decide which tokens are too common to
// tell kinds of work apart: those found in more than a tenth of the tasks
// that came before (in more than a hundred, at least). A checklist line
// that every command carries ("run the tests, update the changelog") would
// otherwise make unrelated tasks near-duplicates and chain them into one
// cluster.
const (
	commonTokenShare = 10
	commonTokenMin   = 100
)

// commonLimit is the number of earlier tasks a token may be in and still
// count for the task that comes after k tasks.
func commonLimit(k int64) int64 { return max(commonTokenMin, k/commonTokenShare) }

// titleNorm is a task's normalised title and its tokens.
func titleNorm(title string) string { return strings.Join(tokens(title), " ") }
