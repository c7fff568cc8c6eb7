package skills

import (
	"encoding/binary"
	"slices"
)

// state reads and changes the mining state through a kv cache: task
// records by chunk, groups and tokens by page, member lists and the
// similarity index.
type state struct {
	kv      *kv
	records map[int64][]*record // decoded record chunks, by chunk number
	dirtyR  map[int64]bool
	pages   map[uint16]map[uint64]*group // decoded group pages
	dirtyP  map[uint16]bool
	tokens  map[byte]map[uint64]token // decoded token pages
	dirtyT  map[byte]bool
}

func newState(c *kv) *state {
	return &state{kv: c, records: map[int64][]*record{}, dirtyR: map[int64]bool{},
		pages: map[uint16]map[uint64]*group{}, dirtyP: map[uint16]bool{},
		tokens: map[byte]map[uint64]token{}, dirtyT: map[byte]bool{}}
}

func (s *state) chunk(c int64) ([]*record, error) {
	if rs, ok := s.records[c]; ok {
		return rs, nil
	}
	val, err := s.kv.get(key1(keyRecords, uint64(c)))
	if err != nil {
		return nil, err
	}
	var rs []*record
	if val != nil {
		if rs, err = decodeRecords(c<<recordShift, val); err != nil {
			return nil, err
		}
	}
	s.records[c] = rs
	return rs, nil
}

// peekRecord returns the record of seq like record, but reads a chunk not
// cached yet without keeping it.
func (s *state) peekRecord(seq int64) (*record, error) {
	if _, ok := s.records[seq>>recordShift]; ok {
		return s.record(seq)
	}
	val, err := s.kv.peek(key1(keyRecords, uint64(seq>>recordShift)))
	if err != nil || val == nil {
		return nil, err
	}
	rs, err := decodeRecordsOf(seq>>recordShift<<recordShift, val, seq)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return rs[0], nil
}

// prefetchRecords reads the chunks of the given seqs at once.
func (s *state) prefetchRecords(seqs []int64) error {
	var keys [][]byte
	for _, q := range seqs {
		if _, ok := s.records[q>>recordShift]; !ok {
			keys = append(keys, key1(keyRecords, uint64(q>>recordShift)))
		}
	}
	return s.kv.prefetch(keys)
}

// record returns the record of seq, nil if there is none.
func (s *state) record(seq int64) (*record, error) {
	rs, err := s.chunk(seq >> recordShift)
	if err != nil {
		return nil, err
	}
	i, ok := slices.BinarySearchFunc(rs, seq, func(r *record, q int64) int { return cmpSeq(r.seq, q) })
	if !ok {
		return nil, nil
	}
	return rs[i], nil
}

func cmpSeq(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// putRecord stores r (new, or changed in place).
func (s *state) putRecord(r *record) error {
	c := r.seq >> recordShift
	rs, err := s.chunk(c)
	if err != nil {
		return err
	}
	i, ok := slices.BinarySearchFunc(rs, r.seq, func(x *record, q int64) int { return cmpSeq(x.seq, q) })
	if ok {
		rs[i] = r
	} else {
		rs = slices.Insert(rs, i, r)
	}
	s.records[c] = rs
	s.dirtyR[c] = true
	return nil
}

func (s *state) page(p uint16) (map[uint64]*group, error) {
	if pg, ok := s.pages[p]; ok {
		return pg, nil
	}
	val, err := s.kv.get(groupPageKey(p))
	if err != nil {
		return nil, err
	}
	pg := map[uint64]*group{}
	err = decodePage(val, func(id uint64, v []byte) error {
		g, err := decodeGroup(id, v)
		pg[id] = g
		return err
	})
	if err != nil {
		return nil, err
	}
	s.pages[p] = pg
	return pg, nil
}

// group returns the group with id gid, nil if there is none.
func (s *state) group(gid uint64) (*group, error) {
	pg, err := s.page(groupPage(gid))
	if err != nil {
		return nil, err
	}
	return pg[gid], nil
}

func (s *state) putGroup(g *group) {
	p := groupPage(g.gid)
	if _, err := s.page(p); err != nil {
		// Unreadable: put it in a fresh page; the write fails later, or the
		// page was never there.
		s.pages[p] = map[uint64]*group{}
	}
	s.pages[p][g.gid] = g
	s.dirtyP[p] = true
}

func (s *state) dropGroup(gid uint64) {
	p := groupPage(gid)
	if pg, err := s.page(p); err == nil {
		delete(pg, gid)
	}
	s.dirtyP[p] = true
}

// token returns a token by hash; ok is false for a token never seen.
func (s *state) token(h uint64) (token, bool, error) {
	b := byte(h >> 56)
	pg, ok := s.tokens[b]
	if !ok {
		val, err := s.kv.get(tokenPageKey(h))
		if err != nil {
			return token{}, false, err
		}
		pg = map[uint64]token{}
		err = decodePage(val, func(id uint64, v []byte) error {
			d := dec{b: v}
			pg[id] = token{order: d.u(), count: d.u()}
			return d.check("token")
		})
		if err != nil {
			return token{}, false, err
		}
		s.tokens[b] = pg
	}
	t, ok := pg[h]
	return t, ok, nil
}

func (s *state) putToken(h uint64, t token) {
	s.tokens[byte(h>>56)][h] = t
	s.dirtyT[byte(h>>56)] = true
}

// flush writes the changed records, groups and tokens into the cache.
func (s *state) flush() {
	for c := range s.dirtyR {
		var b []byte
		for _, r := range s.records[c] {
			b = appendRecord(b, c<<recordShift, r)
		}
		if len(b) == 0 {
			s.kv.del(key1(keyRecords, uint64(c)))
		} else {
			s.kv.put(key1(keyRecords, uint64(c)), b)
		}
	}
	s.dirtyR = map[int64]bool{}
	for p := range s.dirtyP {
		pg := s.pages[p]
		ids := make([]uint64, 0, len(pg))
		for id := range pg {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if len(ids) == 0 {
			s.kv.del(groupPageKey(p))
			continue
		}
		s.kv.put(groupPageKey(p), encodePage[*group](nil, ids, func(b []byte, id uint64) []byte { return appendGroup(b, pg[id]) }))
	}
	s.dirtyP = map[uint16]bool{}
	for b := range s.dirtyT {
		pg := s.tokens[b]
		ids := make([]uint64, 0, len(pg))
		for id := range pg {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		s.kv.put([]byte{keyToken, b}, encodePage[token](nil, ids, func(b []byte, id uint64) []byte { return appendToken(b, pg[id]) }))
	}
	s.dirtyT = map[byte]bool{}
}

// members returns the finished members of a group, ascending.
func (s *state) members(g *group) ([]int64, error) {
	if g == nil || g.size == 0 {
		return nil, nil
	}
	if g.size <= inlineMembers {
		return g.inline, nil
	}
	return s.memberList(g.gid).all()
}

// eachMember calls fn with the finished members of a group, ascending,
// until fn returns false; a large group's list is read a chunk at a time.
func (s *state) eachMember(g *group, fn func(seq int64) (bool, error)) error {
	if g == nil || g.size == 0 {
		return nil
	}
	if g.size <= inlineMembers {
		for _, q := range g.inline {
			if more, err := fn(q); err != nil || !more {
				return err
			}
		}
		return nil
	}
	var ferr error
	err := s.kv.scan(key2(keyList, g.gid, 0), key2(keyList, g.gid+1, 0), false, func(k, v []byte) bool {
		seqs, err := decodeSeqs(int64(binary.BigEndian.Uint64(k[9:])), v)
		if err != nil {
			ferr = err
			return false
		}
		for _, q := range seqs {
			more, err := fn(q)
			if err != nil || !more {
				ferr = err
				return false
			}
		}
		return true
	})
	return errorsOr(err, ferr)
}

// latestMembers returns up to n of a group's latest members, ascending.
func (s *state) latestMembers(g *group, n int) ([]int64, error) {
	if g == nil || g.size <= inlineMembers {
		ms, err := s.members(g)
		if len(ms) > n {
			ms = ms[len(ms)-n:]
		}
		return ms, err
	}
	var out []int64
	var derr error
	err := s.kv.scan(key2(keyList, g.gid, 0), key2(keyList, g.gid+1, 0), true, func(k, v []byte) bool {
		seqs, err := decodeSeqs(int64(binary.BigEndian.Uint64(k[9:])), v)
		if err != nil {
			derr = err
			return false
		}
		out = append(seqs, out...)
		return len(out) < n
	})
	if err == nil {
		err = derr
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, err
}

// editList adds and removes seqs in a sorted chunked list (member lists
// and the similarity index share the chunking; entries of the index are
// postings). It rewrites only the chunks the changes fall in.
type chunkedList[E any] struct {
	kv     *kv
	kind   byte
	list   uint64
	seq    func(E) int64
	encode func([]E) []byte
	decode func(start int64, b []byte) ([]E, error)
}

func (l chunkedList[E]) edit(add []E, remove []int64) error {
	type chunk struct {
		start int64
		es    []E
	}
	chunks := map[int64]*chunk{}
	from, to := key2(l.kind, l.list, 0), key2(l.kind, l.list+1, 0)
	locate := func(seq int64) (*chunk, error) {
		k, v, err := l.kv.floor(from, key2(l.kind, l.list, uint64(seq)))
		if err != nil {
			return nil, err
		}
		if k == nil {
			// Before every chunk: the first one, or a new one.
			err := l.kv.scan(from, to, false, func(fk, fv []byte) bool {
				k, v = append([]byte(nil), fk...), append([]byte(nil), fv...)
				return false
			})
			if err != nil {
				return nil, err
			}
		}
		if k == nil {
			c, ok := chunks[-1]
			if !ok {
				c = &chunk{start: -1}
				chunks[-1] = c
			}
			return c, nil
		}
		start := int64(binary.BigEndian.Uint64(k[9:]))
		if c, ok := chunks[start]; ok {
			return c, nil
		}
		es, err := l.decode(start, v)
		if err != nil {
			return nil, err
		}
		c := &chunk{start: start, es: es}
		chunks[start] = c
		return c, nil
	}
	find := func(es []E, seq int64) (int, bool) {
		return slices.BinarySearchFunc(es, seq, func(e E, q int64) int { return cmpSeq(l.seq(e), q) })
	}
	for _, q := range remove {
		c, err := locate(q)
		if err != nil {
			return err
		}
		if i, ok := find(c.es, q); ok {
			c.es = slices.Delete(c.es, i, i+1)
		}
	}
	for _, e := range add {
		c, err := locate(l.seq(e))
		if err != nil {
			return err
		}
		i, ok := find(c.es, l.seq(e))
		if ok {
			c.es[i] = e
		} else {
			c.es = slices.Insert(c.es, i, e)
		}
	}
	for _, c := range chunks {
		if c.start >= 0 {
			l.kv.del(key2(l.kind, l.list, uint64(c.start)))
		}
	}
	for _, c := range chunks {
		for at := 0; at < len(c.es); at += listChunk {
			part := c.es[at:min(len(c.es), at+listChunk)]
			l.kv.put(key2(l.kind, l.list, uint64(l.seq(part[0]))), l.encode(part))
		}
	}
	return nil
}

// all returns every entry of the list, ascending.
func (l chunkedList[E]) all() ([]E, error) {
	var out []E
	var derr error
	err := l.kv.scan(key2(l.kind, l.list, 0), key2(l.kind, l.list+1, 0), false, func(k, v []byte) bool {
		es, err := l.decode(int64(binary.BigEndian.Uint64(k[9:])), v)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, es...)
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

func (l chunkedList[E]) drop() error {
	var keys [][]byte
	err := l.kv.scan(key2(l.kind, l.list, 0), key2(l.kind, l.list+1, 0), false, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	})
	for _, k := range keys {
		l.kv.del(k)
	}
	return err
}

func (s *state) memberList(gid uint64) chunkedList[int64] {
	return chunkedList[int64]{kv: s.kv, kind: keyList, list: gid,
		seq: func(q int64) int64 { return q }, encode: encodeSeqs, decode: decodeSeqs}
}

func (s *state) postingList(order uint64) chunkedList[posting] {
	return chunkedList[posting]{kv: s.kv, kind: keyPosting, list: order,
		seq: func(p posting) int64 { return p.seq }, encode: encodePostings, decode: decodePostings}
}
