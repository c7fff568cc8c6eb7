package skills

import (
	"unicode/utf8"
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
// without repeats, in no particular order, appended to out[:0]. seen is
// the caller's, emptied first: zeroing a table a task cost more than
// emptying the slots the last task took.
func rawTokens[T string | []byte](title, body T, seen *tokenSet, out []uint64, buf []byte) ([]uint64, []byte) {
	seen.reset()
	out = out[:0]
	add := func(h uint64) {
		if seen.add(h) {
			out = append(out, h)
		}
	}
	buf = hashTokens(title, buf, add)
	buf = hashTokens(body, buf, add)
	return out, buf
}

// tokenSet is a small open-addressing set of token hashes, for a task's
// tokens; it grows past a table of 256.
type tokenSet struct {
	table [256]uint64
	used  []uint8 // the slots of table taken, to empty them
	more  map[uint64]bool
}

// reset empties the set.
func (s *tokenSet) reset() {
	for _, i := range s.used {
		s.table[i] = 0
	}
	s.used, s.more = s.used[:0], nil
}

// add reports whether h was not in the set yet. The hash 0 stands for
// an empty slot, so it is kept in more.
func (s *tokenSet) add(h uint64) bool {
	if h == 0 || len(s.used) >= len(s.table)/2 {
		if s.more == nil {
			s.more = map[uint64]bool{}
			for _, v := range s.table {
				if v != 0 {
					s.more[v] = true
				}
			}
		}
		if s.more[h] {
			return false
		}
		s.more[h] = true
		return true
	}
	for i := h & (uint64(len(s.table)) - 1); ; i = (i + 1) & (uint64(len(s.table)) - 1) {
		switch s.table[i] {
		case h:
			return false
		case 0:
			s.table[i] = h
			s.used = append(s.used, uint8(i))
			return true
		}
	}
}

// hashTokens calls fn with the hash of every token of s, as eachToken
// and hashToken would give them, hashing ASCII words as it reads them.
func hashTokens[T string | []byte](s T, buf []byte, fn func(h uint64)) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return eachToken(s, buf, func(tok []byte) { fn(hashToken(tok)) })
		}
	}
	const offset, prime = 14695981039346656037, 1099511628211
	for i := 0; i < len(s); {
		if lowerWord[s[i]] == 0 {
			i++
			continue
		}
		j := i
		h, prev := uint64(offset), uint64(0)
		var seen byte // the bits of the word's bytes: 0x40 if a letter
		for j < len(s) {
			c := lowerWord[s[j]]
			if c == 0 {
				break
			}
			seen |= c
			prev = h
			h = (h ^ uint64(c)) * prime
			j++
		}
		n := j - i
		w := s[i:j]
		i = j
		if n <= 1 || seen&0x40 == 0 { // digits only
			continue
		}
		if n <= maxStopWord && isStopIn(&stopTable, h, w) {
			continue
		}
		if last, last2 := lowerWord[w[n-1]], lowerWord[w[n-2]]; n > 3 && last == 's' && !(last2 == 's' || last2 == 'u' || last2 == 'i') {
			h = prev
		}
		fn(h)
	}
	return buf
}

// lowerWord is each ASCII letter and digit in lower case, and 0 for every
// other byte: one lookup a byte tells a word's bytes and folds them.
var lowerWord = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			t[c] = byte(c)
		}
	}
	return t
}()

// stopTable holds the stop words by their hashes. hashTokens asks it for
// most words of every task: a Go map took a third of a full scan's
// tokenising, and confirming a hash through the map another tenth.
var stopTable = func() (s stopSet) {
	if len(stopWords) > len(s.hash)/4 {
		panic("skills: more stop words than stopTable holds")
	}
	for w := range stopWords {
		s.add(hashToken([]byte(w)), w)
	}
	return s
}()

// stopSet is a fixed set of at most 256 words keyed by their nonzero
// hashes, open addressing with linear probing in a table four times that.
type stopSet struct {
	hash [1024]uint64
	word [1024]string
}

func (s *stopSet) add(h uint64, w string) {
	for i := h & 1023; ; i = (i + 1) & 1023 {
		if s.hash[i] == 0 {
			s.hash[i], s.word[i] = h, w
			return
		}
	}
}

// isStop reports whether w, of hash h, folds to a stop word; the hash
// only finds the candidate, the bytes decide.
func isStopIn[T string | []byte](s *stopSet, h uint64, w T) bool {
	for i := h & 1023; ; i = (i + 1) & 1023 {
		switch s.hash[i] {
		case 0:
			return false
		case h:
			if sw := s.word[i]; len(sw) == len(w) && foldedEqual(w, sw) {
				return true
			}
		}
	}
}

// foldedEqual reports whether w, folded by lowerWord, is sw.
func foldedEqual[T string | []byte](w T, sw string) bool {
	for k := 0; k < len(w); k++ {
		if lowerWord[w[k]] != sw[k] {
			return false
		}
	}
	return true
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
