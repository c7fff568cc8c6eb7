package skills

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// prefixLen is how many of a set's first tokens (in index order) the
// similarity index keeps it under. Two sets at least t alike share at
// least ceil(t·n) tokens of a set of n, so the first n-ceil(t·n)+k tokens
// of each hold at least k of the shared ones (k = 2, or 1 when so few are
// shared): a candidate pair must share k entries of the index.
func prefixLen(n int, t float64) (p, k int) {
	o := int(math.Ceil(t*float64(n) - 1e-9))
	k = min(2, o)
	return min(n, n-o+k), max(k, 1)
}

// fullCandidates is the stored candidates as a full scan reads them: all
// at once, but for their texts and sources.
type fullCandidates struct {
	v      *store.MineView
	byID   map[string]*store.CandidateLite
	byKeyM map[string]*store.CandidateLite
	names  map[string]bool
	pool   map[string]bool // orphans: title and similar candidates no group found stands for
	refs   map[string][]store.SourceRef
	bySeq  map[int64][]string
}

func newFullCandidates(v *store.MineView, f *fullBuild) (*fullCandidates, error) {
	lites, err := v.CandidatesLite()
	if err != nil {
		return nil, err
	}
	cs := &fullCandidates{v: v, byID: map[string]*store.CandidateLite{}, byKeyM: map[string]*store.CandidateLite{},
		names: map[string]bool{}, pool: map[string]bool{}, refs: map[string][]store.SourceRef{}, bySeq: map[int64][]string{}}
	keys := map[string]bool{}
	for _, o := range f.outputs {
		keys[o.key] = true
	}
	for i := range lites {
		c := &lites[i]
		cs.byID[c.ID] = c
		cs.names[c.Name] = true
		if _, ok := cs.byKeyM[c.GroupKey]; !ok && c.GroupKey != "" {
			cs.byKeyM[c.GroupKey] = c
		}
	}
	for i := range lites {
		c := &lites[i]
		if c.Kind != KindTitle && c.Kind != KindSimilar {
			continue
		}
		if keys[c.GroupKey] && cs.byKeyM[c.GroupKey] == c {
			continue
		}
		refs, err := candidateRefs(v, c.ID)
		if err != nil {
			return nil, err
		}
		cs.pool[c.ID] = true
		cs.refs[c.ID] = refs
		for _, r := range refs {
			cs.bySeq[r.Seq] = append(cs.bySeq[r.Seq], c.ID)
		}
	}
	return cs, nil
}

// candidateRefs reads a candidate's sources as refs, whether they are kept
// in chunks or, for a candidate of an older shogun, as a list of ids.
func candidateRefs(v *store.MineView, id string) ([]store.SourceRef, error) {
	refs, err := v.CandidateSources(id)
	if err != nil || len(refs) > 0 {
		return refs, err
	}
	c, _, err := v.Candidate("id", id)
	if err != nil || len(c.SourceTaskIDs) == 0 {
		return nil, err
	}
	seqs, err := v.SeqsOf(c.SourceTaskIDs)
	if err != nil {
		return nil, err
	}
	for _, tid := range c.SourceTaskIDs {
		if s, ok := seqs[tid]; ok {
			refs = append(refs, store.SourceRef{Seq: s, ID: tid})
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Seq < refs[j].Seq })
	return refs, nil
}

func (cs *fullCandidates) sources(id string) ([]store.SourceRef, error) {
	if refs, ok := cs.refs[id]; ok {
		return refs, nil
	}
	return candidateRefs(cs.v, id)
}

func (cs *fullCandidates) byKey(key string) (*store.CandidateLite, error) { return cs.byKeyM[key], nil }

func (cs *fullCandidates) load(id string) (store.SkillCandidate, error) {
	return cs.v.CandidateText(id)
}

func (cs *fullCandidates) taken(column, value string) (bool, error) {
	if column == "name" {
		return cs.names[value], nil
	}
	_, ok := cs.byID[value]
	return ok, nil
}

func (cs *fullCandidates) orphansOf(seqs []int64) (map[string]int, error) {
	out := map[string]int{}
	for _, s := range seqs {
		for _, id := range cs.bySeq[s] {
			out[id]++
		}
	}
	return out, nil
}

func (cs *fullCandidates) lite(id string) (*store.CandidateLite, error) { return cs.byID[id], nil }

func (cs *fullCandidates) created(id string) (time.Time, error) { return cs.byID[id].CreatedAt, nil }

// orphansAfter is the orphans once changes are made: the pool, but for
// those a group took over.
func (cs *fullCandidates) orphansAfter(changes []candidateChange) (map[string][]store.SourceRef, error) {
	out := map[string][]store.SourceRef{}
	for id := range cs.pool {
		out[id] = cs.refs[id]
	}
	for _, ch := range changes {
		if ch.orphan {
			delete(out, ch.c.ID)
		}
	}
	return out, nil
}

// writeCandidates writes what reconcile decided: texts, statuses and
// sources. bodies holds distilled bodies by settled group; the others are
// read from the state.
func writeCandidates(tx *store.MineTx, changes []candidateChange, bodies map[uint64]string, refs func(*output) ([]store.SourceRef, error), at time.Time) error {
	for _, ch := range changes {
		c := ch.c
		if body, ok := bodies[ch.g.out.hash]; ch.body && ok {
			c.Body = body
		} else if ch.body {
			val, ok, err := tx.Get(key1(keyContent, ch.g.out.hash))
			if err != nil {
				return err
			}
			if !ok {
				return errCorrupt
			}
			_, ct, err := decodeContent(val)
			if err != nil {
				return err
			}
			c.Body = ct.body
		}
		if err := tx.PutCandidate(c, ch.prev, ch.prev != nil && !ch.body, "scan", at); err != nil {
			return err
		}
		if ch.sources {
			rs, err := refs(ch.g.out)
			if err != nil {
				return err
			}
			if err := tx.SetSources(c.ID, rs); err != nil {
				return err
			}
		}
	}
	return nil
}

// write replaces the mining state with the full scan's, but for the
// distilled texts, of which it drops those of groups gone (contents
// distils the changed ones after), for the settled groups, which it
// leaves as they were (reconcile reads them; writeOutputs replaces them),
// and for the orphans, which it drops (writeOrphans writes them once the
// candidates are reconciled).
func (f *fullBuild) write(tx *store.MineTx, maxSeq, lastDecision int64) error {
	live := map[uint64]bool{}
	for _, o := range f.outputs {
		live[o.hash] = true
	}
	var stale [][]byte
	err := tx.Range([]byte{keyContent}, []byte{keyContent + 1}, false, func(k, _ []byte) bool {
		if !live[beUint64(k[1:])] {
			stale = append(stale, append([]byte(nil), k...))
		}
		return true
	})
	if err != nil {
		return err
	}
	for _, k := range stale {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	// The rest of the state, a range of keys at a time (the ranges do not
	// overlap; their order is free): a rebuild mostly finds what it makes,
	// and writes only what differs. Each range lets go of what only it
	// needed, so that the next is encoded with the collector less pressed;
	// the texts and the candidates, after, need only the tasks' seqs, ids
	// and sets, and the settled groups' members.
	finished := f.h.finishedCount()
	h := f.h
	ranges := []struct {
		from, to []byte // from the end of the texts on, with no gap
		gen      func(put func(k, v []byte) error) error
		forget   func()
	}{
		{[]byte{keyToken}, nil, f.encodeTokens, func() { h.tokHash, h.tokCount = nil, nil }},
		{[]byte{keyContent + 1}, []byte{keyMeta}, f.encodeGroups, func() { f.groups, f.gs, f.memberBuf, f.outOf, h.keys = nil, nil, nil, nil, groupKeys{} }},
		{[]byte{keyRecords}, []byte{keyToken}, f.writeRecords, func() {
			h.role, h.finished, h.title, h.tagOff, h.tagBuf = nil, nil, nil, nil, nil
		}},
		{[]byte{keyMeta}, []byte{keyOutput}, func(put func(k, v []byte) error) error {
			for _, m := range f.meta(maxSeq, lastDecision, finished) {
				if err := put(metaKey(m.name), m.val); err != nil {
					return err
				}
			}
			return nil
		}, func() {}},
		// The settled groups [o, p) are left to writeOutputs.
		{[]byte{keyPosting}, []byte{keyRecords}, f.writePostings, func() { h.status, h.cluster, f.rank = nil, nil, nil }},
	}
	for _, r := range ranges {
		err := tx.ReplaceRange(r.from, r.to, func(put func(k, v []byte) error) error { return putAhead(put, r.gen) })
		if err != nil {
			return err
		}
		r.forget()
	}
	return nil
}

// putAhead calls gen in a goroutine of its own and put with what it
// yields, in order: encoding the state and writing it to SQLite take
// about as long, and overlap on two CPUs. Each key and value yielded must
// be its own.
func putAhead(put func(k, v []byte) error, gen func(yield func(k, v []byte) error) error) error {
	type kv struct{ k, v []byte }
	ch := make(chan kv, 64)
	stop := make(chan struct{})
	var genErr error
	go func() {
		defer close(ch)
		genErr = gen(func(k, v []byte) error {
			select {
			case ch <- kv{k, v}:
				return nil
			case <-stop:
				return errStopped
			}
		})
	}()
	var err error
	for x := range ch {
		if err == nil {
			if err = put(x.k, x.v); err != nil {
				close(stop)
			}
		}
	}
	if err != nil {
		return err
	}
	return genErr // set before ch closed
}

// errStopped ends a generator whose consumer failed.
var errStopped = errors.New("stopped")

// encodeGroups yields the groups, by page, and the member lists of those
// too large to keep them in their entry.
func (f *fullBuild) encodeGroups(put func(k, v []byte) error) error {
	h := f.h
	links := f.links()
	// The groups by page, then by gid: one array, not one a page, nor
	// grown by appending (the collector, pressed here, ran at every few
	// megabytes).
	gids := make([]uint64, 0, len(f.groups))
	for gid := range f.groups {
		gids = append(gids, gid)
	}
	slices.SortFunc(gids, func(a, b uint64) int {
		if c := cmp.Compare(groupPage(a), groupPage(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var pages [][2]int // each page's groups: gids[start:end]
	for start := 0; start < len(gids); {
		end := start + 1
		for end < len(gids) && groupPage(gids[end]) == groupPage(gids[start]) {
			end++
		}
		pages = append(pages, [2]int{start, end})
		start = end
	}
	workers := cpus()
	rows := make([]group, workers)
	linked := make([]map[uint64]int, workers)
	for w := range linked {
		linked[w] = map[uint64]int{}
	}
	size := make([]int, workers) // each goroutine's last page's: the next is about as long
	err := encodeInBatches(len(pages), workers, func(w, k int) []byte {
		val := encodePage[*group](make([]byte, 0, size[w]+size[w]/4), gids[pages[k][0]:pages[k][1]], func(b []byte, gid uint64) []byte {
			clear(linked[w])
			for _, l := range linksOf(links, gid) {
				linked[w][l.b] = int(l.n)
			}
			f.row(&rows[w], gid, linked[w])
			return appendGroup(b, &rows[w])
		})
		size[w] = len(val)
		return val
	}, func(k int, val []byte) error {
		return put(groupPageKey(groupPage(gids[pages[k][0]])), val)
	})
	if err != nil {
		return err
	}
	slices.Sort(gids)
	var seqs []int64
	for _, gid := range gids {
		ms := f.membersOf(f.group(gid))
		if len(ms) <= inlineMembers {
			continue
		}
		seqs = seqs[:0]
		for _, m := range ms {
			seqs = append(seqs, h.seq[m])
		}
		for at := 0; at < len(seqs); at += listChunk {
			part := seqs[at:min(len(seqs), at+listChunk)]
			if err := put(key2(keyList, gid, uint64(part[0])), encodeSeqs(part)); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeTokens yields the tokens, by page.
func (f *fullBuild) encodeTokens(put func(k, v []byte) error) error {
	h := f.h
	toks := make([]int32, len(h.tokHash))
	for i := range toks {
		toks[i] = int32(i)
	}
	sort.Slice(toks, func(a, b int) bool { return h.tokHash[toks[a]] < h.tokHash[toks[b]] })
	for start := 0; start < len(toks); {
		page := byte(h.tokHash[toks[start]] >> 56)
		end := start
		for end < len(toks) && byte(h.tokHash[toks[end]]>>56) == page {
			end++
		}
		ids := make([]uint64, 0, end-start)
		byHash := map[uint64]int32{}
		for _, t := range toks[start:end] {
			ids = append(ids, h.tokHash[t])
			byHash[h.tokHash[t]] = t
		}
		val := encodePage[token](nil, ids, func(b []byte, hash uint64) []byte {
			t := byHash[hash]
			return appendToken(b, token{order: orderBase + uint64(f.rank[t]), count: uint64(h.tokCount[t])})
		})
		if err := put([]byte{keyToken, page}, val); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// writeOutputs replaces the settled groups, once reconcile has given each
// its candidate, after the rest of the state.
func (f *fullBuild) writeOutputs(tx *store.MineTx) error {
	outs := append([]*output(nil), f.outputs...)
	sort.Slice(outs, func(i, j int) bool { return outs[i].hash < outs[j].hash })
	return tx.ReplaceRange([]byte{keyOutput}, []byte{keyOutput + 1}, func(put func(k, v []byte) error) error {
		for _, o := range outs {
			if err := put(key1(keyOutput, o.hash), encodeOutput(o)); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeOrphans records the orphans, written after the rest of the state:
// what each holds, and each.
func writeOrphans(tx *store.MineTx, orphans map[string][]store.SourceRef) error {
	var keys [][]byte
	for id, refs := range orphans {
		keys = append(keys, orphanMark(id))
		for _, r := range refs {
			keys = append(keys, orphanKey(r.Seq, id))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	for _, k := range keys {
		if err := tx.Put(k, []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// row is the stored form of a group of the full scan.
// row makes row the stored form of a group of the full scan; it reuses
// row's member list, and holds links.
func (f *fullBuild) row(row *group, gid uint64, links map[uint64]int) {
	h := f.h
	g := f.group(gid)
	ms := f.membersOf(g)
	*row = group{gid: gid, size: len(ms), done: int(g.done), first: h.seq[ms[0]], links: links, inline: row.inline[:0]}
	if gidKind(gid) != gidCluster {
		row.key = h.keys.get(gid)
	}
	if gidKind(gid) == gidProposal {
		p := h.prop[g.latest]
		row.latest, row.name, row.doc = h.seq[g.latest], p.Name, p.Description
	}
	if o := f.outOf[gid]; o != nil {
		row.out = o.hash
	}
	if gidKind(gid) == gidCluster {
		for n := range links {
			if gidKind(n) == gidTitle {
				row.maxLinked = max(row.maxLinked, int(f.group(n).n))
			}
		}
	}
	if len(ms) <= inlineMembers {
		for _, m := range ms {
			row.inline = append(row.inline, h.seq[m])
		}
	}
}

func orphanKey(seq int64, id string) []byte {
	k := make([]byte, 9, 9+len(id))
	k[0] = keyOrphan
	binary.BigEndian.PutUint64(k[1:], uint64(seq))
	return append(k, id...)
}

func orphanMark(id string) []byte { return append([]byte{keyOrphans}, id...) }

type metaValue struct {
	name string
	val  []byte
}

// cursor is the meta value saying how far the state has read: the last
// seq, the number of tasks up to it, and a generation every scan that
// writes moves on.
type cursor struct {
	seq   int64
	count int64
	gen   uint64
}

func encodeCursor(c cursor) []byte {
	e := enc{}
	e.u(uint64(c.seq))
	e.u(uint64(c.count))
	e.u(c.gen)
	return e.b
}

func decodeCursor(b []byte) (cursor, error) {
	d := dec{b: b}
	c := cursor{seq: int64(d.u()), count: int64(d.u()), gen: d.u()}
	return c, d.check("cursor")
}

// options is the part of the scan options the state depends on.
func encodeOptions(o ScanOptions) []byte {
	e := enc{}
	e.u(uint64(o.Threshold))
	e.u(math.Float64bits(o.Similarity))
	return e.b
}

func (f *fullBuild) meta(maxSeq, lastDecision int64, finished int) []metaValue {
	u := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	// A new generation, unlike any before it: the time is as good as any.
	gen := uint64(time.Now().UnixNano())
	return []metaValue{ // sorted by name
		{metaClusters, u(f.nextCluster)},
		{metaCursor, encodeCursor(cursor{seq: maxSeq, count: int64(f.h.n), gen: gen})},
		{metaDecided, u(uint64(lastDecision))},
		{metaFormat, u(formatVersion)},
		{metaGrowth, u(math.Float64bits(f.o.ReopenGrowth))},
		{metaOptions, encodeOptions(f.o)},
		{metaOrders, u(orderBase - 1)},
		{metaTasks, u(uint64(finished))},
	}
}

func (f *fullBuild) writeRecords(put func(k, v []byte) error) error {
	h := f.h
	var chunks [][2]int // the tasks of each chunk, by their seqs' high bits
	for i := 0; i < h.n; {
		j := i + 1
		for j < h.n && h.seq[j]>>recordShift == h.seq[i]>>recordShift {
			j++
		}
		chunks = append(chunks, [2]int{i, j})
		i = j
	}
	workers := cpus()
	orders := make([][]uint64, workers)
	size := make([]int, workers) // each goroutine's last chunk's: the next is about as long
	return encodeInBatches(len(chunks), workers, func(w, k int) []byte {
		base := h.seq[chunks[k][0]] >> recordShift << recordShift
		buf := make([]byte, 0, size[w]+size[w]/4)
		for i := chunks[k][0]; i < chunks[k][1]; i++ {
			orders[w] = f.appendOrders(orders[w][:0], i)
			r := &record{seq: h.seq[i], id: h.id(i), role: h.roleNames[h.role[i]], status: h.status[i],
				finished: h.finished[i], title: h.title[i], tags: h.tags(i), set: orders[w]}
			if p, ok := h.prop[int32(i)]; ok {
				r.prop, r.propName, r.propDoc = keyGID(gidProposal, proposalKey(p.Name)), p.Name, p.Description
			}
			r.cluster, r.root = h.clusterOf(i), h.root(i)
			buf = appendRecord(buf, base, r)
		}
		size[w] = len(buf)
		return buf
	}, func(k int, val []byte) error {
		return put(key1(keyRecords, uint64(h.seq[chunks[k][0]]>>recordShift)), val)
	})
}

// encodeInBatches gives put the n values encode makes, in order: encoded a
// batch at a time on workers goroutines (encode's w is which), each batch
// yielded while the next is encoded; put, a putAhead's, hands them to
// SQLite in a goroutine of its own.
func encodeInBatches(n, workers int, encode func(w, k int) []byte, put func(k int, val []byte) error) error {
	const batch = 64
	vals := make([][]byte, batch)
	for b := 0; b < n; b += batch {
		m := min(batch, n-b)
		inParallel(m, workers, func(w, lo, hi int) {
			for k := lo; k < hi; k++ {
				vals[k] = encode(w, b+k)
			}
		})
		for k := range vals[:m] {
			if err := put(b+k, vals[k]); err != nil {
				return err
			}
			vals[k] = nil
		}
	}
	return nil
}

// writePostings writes the similarity index: every finished task with a
// set of two tokens or more, under the first tokens of its set.
//
// The index is made a range of ranks at a time (the whole of it would
// take more memory than the history's sets), each by one pass over the
// tasks in order, encoding each task's postings into the chunks of its
// ranks as it goes: reading the tasks in order, not by rank, keeps their
// seqs, sets and clusters in the CPU's caches.
func (f *fullBuild) writePostings(put func(k, v []byte) error) error {
	h := f.h
	t := f.o.Similarity
	// The goroutines read every task's prefix once a range of ranks:
	// its length by the set's, from a table.
	var plen []int32
	for i := 0; i < h.n; i++ {
		for n := len(h.set(i)); len(plen) <= n; {
			p, _ := prefixLen(len(plen), t)
			plen = append(plen, int32(p))
		}
	}
	each := func(fn func(i int, ranks []int32)) {
		for i := 0; i < h.n; i++ {
			ranks := h.set(i)
			if h.status[i] == codeOpen || len(ranks) < 2 {
				continue
			}
			fn(i, ranks[:plen[len(ranks)]])
		}
	}
	count := make([]int32, len(f.rank))
	each(func(_ int, ranks []int32) {
		for _, r := range ranks {
			count[r]++
		}
	})
	type chunk struct {
		first, prev int64
		n           int
		b           []byte
	}
	// Each task's sketch, once: the goroutines computed it again for every
	// range of ranks a task has postings in.
	sketches := make([]sketch, h.n)
	inParallel(h.n, cpus(), func(_, lo, hi int) {
		var orders []uint64
		for i := lo; i < hi; i++ {
			if set := h.set(i); h.status[i] != codeOpen && len(set) >= 2 {
				orders = orders[:0]
				for _, x := range set {
					orders = append(orders, orderBase+uint64(x))
				}
				sketches[i] = sketchOf(orders)
			}
		}
	})
	var lists [][]chunk // by rank, from the range's first
	// encode makes the chunks of the ranks in [from, to) of the range
	// that starts at lo.
	encode := func(lo, from, to int) {
		each(func(i int, ranks []int32) {
			var p posting
			made := false
			if int(ranks[0]) >= to || int(ranks[len(ranks)-1]) < from {
				return // ascending: none in range
			}
			for _, r := range ranks {
				if int(r) < from {
					continue
				}
				if int(r) >= to {
					break
				}
				if !made {
					p = posting{seq: h.seq[i], n: len(h.set(i)), cluster: h.clusterOf(i), sketch: sketches[i]}
					made = true
				}
				cs := lists[int(r)-lo]
				if len(cs) == 0 || cs[len(cs)-1].n == listChunk {
					// Sized for the postings it will hold, at the most
					// a posting usually takes: grown from nothing, the
					// chunks left the collector several times the
					// index to sweep.
					left := int(count[r]) - len(cs)*listChunk
					cs = append(cs, chunk{first: p.seq, prev: p.seq, b: make([]byte, 0, min(left, listChunk)*postingSize)})
					lists[int(r)-lo] = cs
				}
				c := &cs[len(cs)-1]
				c.b = appendPosting(c.b, c.prev, p)
				c.prev = p.seq
				c.n++
			}
		})
	}
	workers := cpus()
	for lo := 0; lo < len(count); {
		hi, n := lo, 0
		for hi < len(count) && (n == 0 || n+int(count[hi]) <= postingBudget) {
			n += int(count[hi])
			hi++
		}
		// The range's ranks are shared among the CPUs, about as many
		// postings each: each goroutine reads all the tasks and encodes
		// the postings of its own ranks (SQLite's side of the write takes
		// little of a CPU).
		bounds := []int{lo}
		for r, sum := lo, 0; r < hi-1 && len(bounds) < workers; r++ {
			if sum += int(count[r]); sum*workers >= n*len(bounds) {
				bounds = append(bounds, r+1)
			}
		}
		bounds = append(bounds, hi)
		lists = make([][]chunk, hi-lo)
		inParallel(len(bounds)-1, len(bounds)-1, func(_, from, to int) {
			for k := from; k < to; k++ {
				encode(lo, bounds[k], bounds[k+1])
			}
		})
		for k, cs := range lists {
			for _, c := range cs {
				if err := put(key2(keyPosting, orderBase+uint64(lo+k), uint64(c.first)), c.b); err != nil {
					return err
				}
			}
			lists[k] = nil
		}
		lo = hi
	}
	return nil
}

// postingSize is how many bytes a posting of the similarity index
// usually takes at most: its seq's step, set length and cluster as
// varints, and its sketch.
const postingSize = 3 + 1 + 3 + len(sketch{})

// postingBudget is the most entries of the similarity index a full scan
// holds encoded at once (about 22 bytes each).
const postingBudget = 1 << 19

// linkCount is how many finished tasks groups a and b share.
type linkCount struct {
	a, b uint64
	n    int32
}

// links counts how many finished tasks each title group shares with each
// cluster of two or more, and each proposal with each title group and
// cluster, both ways; sorted by a, then b. Few pairs of groups share
// tasks, so they are counted in a map of pairs (no pointers for the
// collector to follow), not per task.
func (f *fullBuild) links() []linkCount {
	h := f.h
	type pair struct{ a, b uint64 }
	count := map[pair]int32{}
	grouped := make([]bool, f.nextCluster) // by cluster number: of two or more
	for gid := range f.groups {
		if gidKind(gid) == gidCluster {
			grouped[gid&gidMask] = true
		}
	}
	clusterOf := func(i int) uint64 {
		if h.cluster != nil && grouped[h.cluster[i]] {
			return h.clusterOf(i)
		}
		return 0
	}
	for i := 0; i < h.n; i++ {
		if h.status[i] != codeOpen && h.title[i] != 0 {
			if cl := clusterOf(i); cl != 0 {
				count[pair{h.title[i], cl}]++
			}
		}
	}
	// Few tasks hold a proposal: they are counted apart, rather than
	// looked up for every task.
	for i, p := range h.prop {
		if h.status[i] == codeOpen {
			continue
		}
		prop := keyGID(gidProposal, proposalKey(p.Name))
		for _, other := range [2]uint64{h.title[i], clusterOf(int(i))} {
			if other != 0 {
				count[pair{prop, other}]++
			}
		}
	}
	// Each way: a group's links are found under it.
	out := make([]linkCount, 0, 2*len(count))
	for p, n := range count {
		out = append(out, linkCount{p.a, p.b, n}, linkCount{p.b, p.a, n})
	}
	slices.SortFunc(out, func(x, y linkCount) int {
		if x.a != y.a {
			return cmp.Compare(x.a, y.a)
		}
		return cmp.Compare(x.b, y.b)
	})
	return out
}

// linksOf is the links of group a, from links' result.
func linksOf(links []linkCount, a uint64) []linkCount {
	i, _ := slices.BinarySearchFunc(links, a, func(l linkCount, a uint64) int { return cmp.Compare(l.a, a) })
	j := i
	for j < len(links) && links[j].a == a {
		j++
	}
	return links[i:j]
}
