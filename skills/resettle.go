package skills

import (
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// ioutput is a settled group an incremental scan touches.
type ioutput struct {
	o   *output
	old *output // as stored before the scan, nil if new
	// adds and removes change its members.
	adds    map[int64]*record
	removes map[int64]bool
	removed []*record // the records of the members removed, as they were
	changed bool      // members, their finish times, or the text's header
}

// participant says whether g takes part in settling: a proposal, or a
// title group or cluster big enough, from enough chains of commands.
func (m *miner) participant(g *group) (bool, error) {
	if g == nil || g.size == 0 || g.into != 0 {
		return false, nil
	}
	switch gidKind(g.gid) {
	case gidProposal:
		return true, nil
	case gidTitle:
		if g.size >= m.o.Threshold && g.done > 0 {
			return m.enoughChains(g, minChains(KindTitle, m.o.Threshold))
		}
	case gidCluster:
		if g.size >= 2 && g.size >= m.o.Threshold && g.done > 0 {
			return m.enoughChains(g, minChains(KindSimilar, m.o.Threshold))
		}
	}
	return false, nil
}

// enoughChains says whether g's tasks come from at least n chains of
// commands (chainKey), reading members until it has seen n. It is asked
// once the groups are final, and remembers the answer for the scan.
func (m *miner) enoughChains(g *group, n int) (bool, error) {
	if ok, known := m.chains[g.gid]; known {
		return ok, nil
	}
	c := chainCounter{n: n}
	ok := n <= 0
	err := m.s.eachMember(g, func(seq int64) (bool, error) {
		r, err := m.rec(seq)
		if err != nil || r == nil {
			return false, errorsOr(err, errCorrupt)
		}
		ok = c.add(r.chain())
		return !ok, nil
	})
	if err != nil {
		return false, err
	}
	m.chains[g.gid] = ok
	return ok, nil
}

// outB is the settled group gid was in before this scan.
func (m *miner) outB(gid uint64) (uint64, error) {
	if gid == 0 {
		return 0, nil
	}
	if o, ok := m.outBefore[gid]; ok {
		return o, nil
	}
	g, err := m.s.group(gid)
	if err != nil || g == nil {
		return 0, err
	}
	return g.out, nil
}

// outN is the settled group gid is in now.
func (m *miner) outN(gid uint64) (uint64, error) {
	if gid == 0 {
		return 0, nil
	}
	g, err := m.s.group(gid)
	if err != nil || g == nil {
		return 0, err
	}
	return g.out, nil
}

func (m *miner) loadOutput(hash uint64) (*output, error) {
	v, err := m.kv.get(key1(keyOutput, hash))
	if err != nil || v == nil {
		return nil, err
	}
	return decodeOutput(hash, v)
}

// groupKeyNow is the key a group settles under: a cluster's is its first
// task's id.
func (m *miner) groupKeyNow(g *group) (string, error) {
	if gidKind(g.gid) != gidCluster {
		return g.key, nil
	}
	r, err := m.rec(g.first)
	if err != nil || r == nil {
		return "", errorsOr(err, errCorrupt)
	}
	return KindSimilar + ":" + r.id, nil
}

// okey is a group's place in the order groups settle in: proposals by
// key, then the others largest first, the more specific kind first, by
// key.
type okey struct {
	class, size, rank int
	key               string
}

func (a okey) less(b okey) bool {
	if a.class != b.class {
		return a.class < b.class
	}
	if a.class == 0 {
		return a.key < b.key
	}
	if a.size != b.size {
		return a.size > b.size
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.key < b.key
}

func (m *miner) orderKey(g *group) (okey, error) {
	key, err := m.groupKeyNow(g)
	if err != nil {
		return okey{}, err
	}
	if gidKind(g.gid) == gidProposal {
		return okey{class: 0, key: key}, nil
	}
	return okey{class: 1, size: g.size, rank: kindRank(kindOfGID(g.gid)), key: key}, nil
}

// decide settles one group as settle would, given the groups settled
// before it: the settled group it belongs to, 0 for none.
func (m *miner) decide(g *group) (uint64, error) {
	if ok, err := m.participant(g); err != nil || !ok {
		return 0, err
	}
	key, err := m.groupKeyNow(g)
	if err != nil {
		return 0, err
	}
	own := outputHash("", key)
	if gidKind(g.gid) == gidProposal {
		return own, nil
	}
	propKey := ""
	for n := range g.links {
		if gidKind(n) != gidProposal {
			continue
		}
		p, err := m.s.group(n)
		if err != nil {
			return 0, err
		}
		ok, err := m.participant(p)
		if err != nil {
			return 0, err
		}
		if ok && (propKey == "" || p.key < propKey) {
			propKey = p.key
		}
	}
	if propKey != "" {
		return outputHash("", propKey), nil
	}
	other := gidTitle
	if gidKind(g.gid) == gidTitle {
		other = gidCluster
	} else if g.maxLinked < g.size {
		return own, nil // no title group it shares tasks with is as large
	}
	me, err := m.orderKey(g)
	if err != nil {
		return 0, err
	}
	count := map[uint64]int{}
	for n, c := range g.links {
		if gidKind(n) != other {
			continue
		}
		ng, err := m.s.group(n)
		if err != nil {
			return 0, err
		}
		if ok, err := m.participant(ng); err != nil {
			return 0, err
		} else if !ok || ng.out == 0 {
			continue
		}
		nk, err := m.orderKey(ng)
		if err != nil {
			return 0, err
		}
		if nk.less(me) {
			count[ng.out] += c
		}
	}
	var best uint64
	bestN, bestKey := 0, ""
	for h, n := range count {
		o, err := m.outputNow(h)
		if err != nil {
			return 0, err
		}
		if n > bestN || (n == bestN && o.key < bestKey) {
			best, bestN, bestKey = h, n, o.key
		}
	}
	if best != 0 && 2*bestN >= g.size {
		return best, nil
	}
	return own, nil
}

// outputNow is a settled group as this scan has it so far: touched, or
// as stored, or made by this scan (m.made).
func (m *miner) outputNow(h uint64) (*output, error) {
	if o := m.made[h]; o != nil {
		return o, nil
	}
	o, err := m.loadOutput(h)
	if err == nil && o == nil {
		err = errCorrupt
	}
	return o, err
}

// groupQueue holds the groups to settle again, in settling order.
type groupQueue struct {
	keys   []okey
	gids   []uint64
	queued map[uint64]bool
}

func (q *groupQueue) Len() int           { return len(q.gids) }
func (q *groupQueue) Less(i, j int) bool { return q.keys[i].less(q.keys[j]) }
func (q *groupQueue) Swap(i, j int) {
	q.keys[i], q.keys[j] = q.keys[j], q.keys[i]
	q.gids[i], q.gids[j] = q.gids[j], q.gids[i]
}
func (q *groupQueue) Push(x any) {
	e := x.(queued)
	q.keys, q.gids = append(q.keys, e.k), append(q.gids, e.gid)
}
func (q *groupQueue) Pop() any {
	n := len(q.gids) - 1
	e := queued{q.keys[n], q.gids[n]}
	q.keys, q.gids = q.keys[:n], q.gids[:n]
	return e
}

type queued struct {
	k   okey
	gid uint64
}

// resettle settles again the groups this scan may have changed the
// settling of. The settling of a group depends only on the groups before
// it that it shares tasks with, so a group is decided again when it
// changed, or when one of those changed where it settled; and the groups
// after a group that changed where it settled, that share tasks with it,
// are decided again in turn. In a history that only grows, that is the
// handful of groups the new tasks joined.
func (m *miner) resettle() error {
	q := &groupQueue{queued: map[uint64]bool{}}
	push := func(gid uint64) error {
		if q.queued[gid] {
			return nil
		}
		g, err := m.s.group(gid)
		if err != nil {
			return err
		}
		q.queued[gid] = true
		if g == nil || g.into != 0 {
			// Gone, or merged into another cluster: in no settled group now.
			return m.setOut(gid, 0)
		}
		k, err := m.orderKey(g)
		if err != nil {
			return err
		}
		heap.Push(q, queued{k, gid})
		return nil
	}
	neighbours := func(gid uint64) error {
		g, err := m.s.group(gid)
		if err != nil || g == nil {
			return err
		}
		for n := range g.links {
			if err := push(n); err != nil {
				return err
			}
		}
		return nil
	}
	dirty := make([]uint64, 0, len(m.dirty))
	for gid := range m.dirty {
		if gidKind(gid) != gidTag {
			dirty = append(dirty, gid)
		}
	}
	slices.Sort(dirty)
	for _, gid := range dirty {
		if err := push(gid); err != nil {
			return err
		}
		g, err := m.s.group(gid)
		if err != nil {
			return err
		}
		if g == nil {
			continue
		}
		// A group whose size changed may now settle before or after those
		// it shares tasks with; a title group shares tasks with few.
		size0 := m.sizeBefore[gid]
		cross := m.relinked[gid] || (size0 != g.size && (gidKind(gid) != gidCluster || g.maxLinked >= min(size0, g.size)))
		if cross {
			if err := neighbours(gid); err != nil {
				return err
			}
		}
	}
	for q.Len() > 0 {
		e := heap.Pop(q).(queued)
		g, err := m.s.group(e.gid)
		if err != nil {
			return err
		}
		out, err := m.decide(g)
		if err != nil {
			return err
		}
		if out == g.out {
			continue
		}
		if err := m.setOut(e.gid, out); err != nil {
			return err
		}
		if out != 0 {
			if err := m.makeOutput(out, g); err != nil {
				return err
			}
		}
		for n := range g.links {
			if q.queued[n] {
				continue
			}
			ng, err := m.s.group(n)
			if err != nil {
				return err
			}
			if ng == nil || ng.into != 0 {
				continue
			}
			nk, err := m.orderKey(ng)
			if err != nil {
				return err
			}
			if e.k.less(nk) {
				q.queued[n] = true
				heap.Push(q, queued{nk, n})
			}
		}
	}
	return nil
}

// setOut moves group gid to settled group out, remembering where it was.
func (m *miner) setOut(gid, out uint64) error {
	g, err := m.s.group(gid)
	if err != nil || g == nil {
		if _, ok := m.outBefore[gid]; !ok && err == nil {
			m.outBefore[gid] = 0
		}
		return err
	}
	if _, ok := m.outBefore[gid]; !ok {
		m.outBefore[gid] = g.out
	}
	if g.out != out {
		g.out = out
		m.s.putGroup(g)
	}
	return nil
}

// makeOutput notes a settled group this scan may have made: out, kept
// for group g when g is its own.
func (m *miner) makeOutput(out uint64, g *group) error {
	key, err := m.groupKeyNow(g)
	if err != nil || outputHash("", key) != out {
		return err
	}
	if _, ok := m.made[out]; ok {
		return nil
	}
	if o, err := m.loadOutput(out); err != nil || o != nil {
		return err
	}
	o := &output{kind: kindOfGID(g.gid), key: key, own: g.size, hash: out}
	if err := m.describe(o, g.gid); err != nil {
		return err
	}
	m.made[out] = o
	return nil
}

// describe fills in what a settled group's text says besides its members.
func (m *miner) describe(o *output, gid uint64) error {
	switch o.kind {
	case KindTitle:
		o.role = roleOfTitleKey(o.key)
	case KindTag:
		o.tag = strings.TrimPrefix(o.key, KindTag+":")
	case KindProposed:
		g, err := m.s.group(gid)
		if err != nil || g == nil {
			return errorsOr(err, errCorrupt)
		}
		o.proposed, o.proposedDoc = g.name, g.doc
	}
	return nil
}

// tagGroups are every tag group, by id.
func (m *miner) tagGroups() ([]*group, error) {
	m.s.flush()
	var pages []uint16
	err := m.kv.scan(groupPageKey(gidTag<<12), groupPageKey((gidTag+1)<<12), false, func(k, _ []byte) bool {
		pages = append(pages, uint16(k[1])<<8|uint16(k[2]))
		return true
	})
	if err != nil {
		return nil, err
	}
	var out []*group
	for _, p := range pages {
		pg, err := m.s.page(p)
		if err != nil {
			return nil, err
		}
		for _, g := range pg {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gid < out[j].gid })
	return out, nil
}

// settleTags decides again which tag groups stand for a candidate: those
// big enough whose tasks are not all in one kept group (or a larger tag
// kept before them).
func (m *miner) settleTags(size func(uint64) (int, error)) error {
	tags, err := m.tagGroups()
	if err != nil {
		return err
	}
	var big []*group
	for _, g := range tags {
		ok := g.size >= m.o.Threshold && g.done > 0
		if ok {
			var err error
			if ok, err = m.enoughChains(g, minChains(KindTag, m.o.Threshold)); err != nil {
				return err
			}
		}
		if ok {
			big = append(big, g)
		} else if err := m.setOut(g.gid, 0); err != nil {
			return err
		}
	}
	for gid := range m.dirty {
		if gidKind(gid) == gidTag {
			if err := m.setOut(gid, 0); err != nil { // gone groups; the others are set below
				return err
			}
		}
	}
	sort.Slice(big, func(i, j int) bool { return tagOrder(big[i].size, big[i].key, big[j].size, big[j].key) })
	kept := map[uint64]bool{}
	for _, g := range big {
		contained, err := m.tagContained(g, kept, size)
		if err != nil {
			return err
		}
		if contained {
			if err := m.setOut(g.gid, 0); err != nil {
				return err
			}
			continue
		}
		kept[g.gid] = true
		hash := outputHash(KindTag, g.key)
		if err := m.setOut(g.gid, hash); err != nil {
			return err
		}
		if err := m.makeOutput(hash, g); err != nil {
			return err
		}
	}
	return nil
}

// tagContained reports whether every task of tag group g is in one kept
// group that holds its first task.
func (m *miner) tagContained(g *group, keptTags map[uint64]bool, size func(uint64) (int, error)) (bool, error) {
	r0, err := m.rec(g.first)
	if err != nil || r0 == nil {
		return false, errorsOr(err, errCorrupt)
	}
	outsOf := func(r *record) ([3]uint64, error) {
		var o [3]uint64
		c := uint64(0)
		if r.cluster != 0 {
			var err error
			if c, err = m.resolve(r.cluster); err != nil {
				return o, err
			}
		}
		for i, gid := range []uint64{r.title, c, r.prop} {
			var err error
			if o[i], err = m.outN(gid); err != nil {
				return o, err
			}
		}
		return o, nil
	}
	o0, err := outsOf(r0)
	if err != nil {
		return false, err
	}
	type cand struct {
		hash uint64
		tag  uint64
	}
	var cands []cand
	for _, h := range o0 {
		if h != 0 && !slices.Contains(cands, cand{hash: h}) {
			cands = append(cands, cand{hash: h})
		}
	}
	for _, t := range r0.tags {
		if t != g.gid && keptTags[t] {
			cands = append(cands, cand{tag: t})
		}
	}
	for _, c := range cands {
		var n int
		if c.tag != 0 {
			tg, err := m.s.group(c.tag)
			if err != nil {
				return false, err
			}
			n = tg.size
		} else if n, err = size(c.hash); err != nil {
			return false, err
		}
		if n < g.size {
			continue
		}
		// The first task outside c ends the walk: on a long history a tag
		// group's members are many, and most tag groups are not contained.
		all := true
		err := m.s.eachMember(g, func(q int64) (bool, error) {
			r, err := m.rec(q)
			if err != nil || r == nil {
				return false, errorsOr(err, errCorrupt)
			}
			if c.tag != 0 {
				all = slices.Contains(r.tags, c.tag)
			} else {
				o, err := outsOf(r)
				if err != nil {
					return false, err
				}
				all = o[0] == c.hash || o[1] == c.hash || o[2] == c.hash
			}
			return all, nil
		})
		if err != nil {
			return false, err
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}

// outsOfRecord are the settled groups r is in through its tag groups
// (tags) or its others, with the out function given (before or now) and
// r's cluster as given.
func (m *miner) outsOfRecord(r *record, cluster uint64, out func(uint64) (uint64, error), tags bool) (map[uint64]bool, error) {
	res := map[uint64]bool{}
	if r == nil || !r.finishedOK() {
		return res, nil
	}
	gids := []uint64{r.title, cluster, r.prop}
	if tags {
		gids = r.tags
	}
	for _, gid := range gids {
		o, err := out(gid)
		if err != nil {
			return nil, err
		}
		if o != 0 {
			res[o] = true
		}
	}
	return res, nil
}

// applyDiffs finds which settled groups each moved task left and joined:
// the tag groups (tags) or the others. The tasks that move are those this
// scan read, those whose cluster merged or split, and those of groups
// that settled elsewhere.
func (m *miner) applyDiffs(outs map[uint64]*ioutput, tags bool) error {
	seqs := map[int64]bool{}
	for q := range m.after {
		seqs[q] = true
	}
	for q := range m.moved {
		seqs[q] = true
	}
	for q := range m.reout {
		seqs[q] = true
	}
	sorted := make([]int64, 0, len(seqs))
	for q := range seqs {
		sorted = append(sorted, q)
	}
	slices.Sort(sorted)
	if err := m.s.prefetchRecords(sorted); err != nil {
		return err
	}
	for _, q := range sorted {
		var before, after *record
		var oldC, newC uint64
		if a, ok := m.after[q]; ok {
			before, after = m.before[q], a
			oldC = m.oldRoot[q]
		} else {
			r, err := m.s.record(q)
			if err != nil || r == nil {
				return errorsOr(err, errCorrupt)
			}
			before, after = r, r
			if mv, ok := m.moved[q]; ok {
				oldC = mv[0]
			} else if r.cluster != 0 {
				var err error
				if oldC, err = m.resolve(r.cluster); err != nil {
					return err
				}
			}
		}
		if after.finishedOK() && after.cluster != 0 {
			var err error
			if newC, err = m.resolve(after.cluster); err != nil {
				return err
			}
		}
		olds, err := m.outsOfRecord(before, oldC, m.outB, tags)
		if err != nil {
			return err
		}
		news, err := m.outsOfRecord(after, newC, m.outN, tags)
		if err != nil {
			return err
		}
		recChanged := before != after
		for h := range olds {
			io, err := m.touch(outs, h, tags)
			if err != nil {
				return err
			}
			if io == nil {
				continue
			}
			if !news[h] {
				io.remove(before, q)
			} else if recChanged {
				io.remove(before, q)
				io.add(after)
			}
		}
		for h := range news {
			if olds[h] {
				continue
			}
			io, err := m.touch(outs, h, tags)
			if err != nil {
				return err
			}
			if io != nil {
				io.add(after)
			}
		}
	}
	return nil
}

// touch returns the settled group h if it is a tag group (tags) or not,
// loading one the region did not reach.
func (m *miner) touch(outs map[uint64]*ioutput, h uint64, tags bool) (*ioutput, error) {
	if io := outs[h]; io != nil {
		if (io.o.kind == KindTag) != tags {
			return nil, nil
		}
		return io, nil
	}
	o, err := m.loadOutput(h)
	if err != nil {
		return nil, err
	}
	if o == nil {
		made := m.made[h]
		if made == nil || (made.kind == KindTag) != tags {
			return nil, nil
		}
		cp := *made
		io := &ioutput{o: &cp}
		outs[h] = io
		return io, nil
	}
	if (o.kind == KindTag) != tags {
		return nil, nil
	}
	cp := *o
	cp.parts = slices.Clone(o.parts)
	io := &ioutput{o: &cp, old: o}
	outs[h] = io
	return io, nil
}

func (io *ioutput) add(r *record) {
	if io.adds == nil {
		io.adds = map[int64]*record{}
	}
	if io.removes[r.seq] {
		delete(io.removes, r.seq)
	}
	io.adds[r.seq] = r
	io.changed = true
}

func (io *ioutput) remove(r *record, seq int64) {
	if io.removes == nil {
		io.removes = map[int64]bool{}
	}
	if _, ok := io.adds[seq]; ok {
		delete(io.adds, seq)
	}
	io.removes[seq] = true
	io.changed = true
	io.removed = append(io.removed, r)
}

// finish works out a touched settled group's stats and fingerprints from
// the changes to its members.
func (m *miner) finish(io *ioutput) error {
	o := io.o
	old := io.old
	if old == nil {
		old = &output{kind: o.kind, key: o.key, role: o.role, tag: o.tag, proposed: o.proposed, proposedDoc: o.proposedDoc}
		old.fp = old.headerHash()
		io.changed = true
	}
	o.cand = old.cand
	o.stats = old.stats
	o.stats.roles = map[string]int{}
	for r, n := range old.stats.roles {
		o.stats.roles[r] = n
	}
	o.mfp = old.mfp
	o.fp = old.fp - old.headerHash() + o.headerHash()
	if o.fp != old.fp || o.own != old.own {
		io.changed = true
	}
	s := &o.stats
	firstGone := false
	for _, r := range io.removed {
		s.add(r, -1)
		o.fp -= memberHash(r.seq, r.finished)
		if !io.adds[r.seq].isSet() {
			o.mfp -= memberHash(r.seq, 0)
		}
		if r.seq == s.first {
			firstGone = true
		}
	}
	for q, r := range io.adds {
		s.add(r, 1)
		o.fp += memberHash(q, r.finished)
		if !io.wasRemoved(q) {
			o.mfp += memberHash(q, 0)
		}
	}
	if firstGone {
		s.first, s.firstFinished = 0, 0
		if old.cand != "" {
			refs, err := m.tx.FirstSources(old.cand, len(io.removes)+1)
			if err != nil {
				return err
			}
			for _, ref := range refs {
				if !io.removes[ref.Seq] || io.adds[ref.Seq] != nil {
					r, err := m.rec(ref.Seq)
					if err != nil || r == nil {
						return errorsOr(err, errCorrupt)
					}
					s.first, s.firstFinished = r.seq, r.finished
					break
				}
			}
		}
		for q, r := range io.adds {
			if s.first == 0 || q < s.first {
				s.first, s.firstFinished = q, r.finished
			}
		}
	} else {
		for q, r := range io.adds {
			if q == s.first {
				s.firstFinished = r.finished
			}
		}
	}
	return nil
}

func (r *record) isSet() bool { return r != nil }

func (io *ioutput) wasRemoved(q int64) bool {
	for _, r := range io.removed {
		if r.seq == q {
			return true
		}
	}
	return false
}

// latest returns the group's latest n members, ascending.
func (m *miner) latest(io *ioutput, n int) ([]int64, error) {
	var refs []store.SourceRef
	if io.old != nil && io.old.cand != "" {
		var err error
		if refs, err = m.tx.LatestSources(io.old.cand, n+len(io.removes)); err != nil {
			return nil, err
		}
	}
	var out []int64
	for _, r := range refs {
		if !io.removes[r.Seq] {
			out = append(out, r.Seq)
		}
	}
	for q := range io.adds {
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

// allMembers returns every member of a touched group, ascending.
func (m *miner) allMembers(io *ioutput) ([]int64, error) {
	var refs []store.SourceRef
	if io.old != nil && io.old.cand != "" {
		var err error
		if refs, err = m.tx.CandidateSources(io.old.cand); err != nil {
			return nil, err
		}
	}
	var out []int64
	for _, r := range refs {
		if !io.removes[r.Seq] {
			out = append(out, r.Seq)
		}
	}
	for q := range io.adds {
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// content returns the text of a touched group: the stored one if its
// inputs did not change, else a new one, stored.
func (m *miner) content(io *ioutput) (content, error) {
	o := io.o
	v, err := m.kv.get(key1(keyContent, o.hash))
	if err != nil {
		return content{}, err
	}
	if v != nil && contentFP(v) == o.fp {
		_, ct, err := decodeContent(v)
		ct.body = ""
		return ct, err
	}
	seqs, err := m.latest(io, sampleSize)
	if err != nil {
		return content{}, err
	}
	ts, err := m.tx.SampleTasks(seqs)
	if err != nil {
		return content{}, err
	}
	in := &distillInput{kind: o.kind, key: o.key, role: o.role, tag: o.tag, proposed: o.proposed,
		proposedDoc: o.proposedDoc, stats: o.stats}
	for i, t := range ts {
		r, err := m.rec(seqs[i])
		if err != nil || r == nil {
			return content{}, errorsOr(err, errCorrupt)
		}
		in.tasks = append(in.tasks, newSTask(t, r.set))
	}
	ct := distill(in)
	m.kv.put(key1(keyContent, o.hash), encodeContent(o.fp, ct))
	ct.body = ""
	return ct, nil
}

// incCandidates is the stored candidates as an incremental scan reads
// them: one at a time, as needed.
type incCandidates struct{ m *miner }

func (c incCandidates) byKey(key string) (*store.CandidateLite, error) {
	return c.m.tx.CandidateLiteByKey(key)
}

func (c incCandidates) load(id string) (store.SkillCandidate, error) { return c.m.tx.CandidateText(id) }

func (c incCandidates) taken(column, value string) (bool, error) { return c.m.tx.Taken(column, value) }

func (c incCandidates) orphansOf(seqs []int64) (map[string]int, error) {
	out := map[string]int{}
	for _, q := range seqs {
		from := key1(keyOrphan, uint64(q))
		err := c.m.kv.scan(from, key1(keyOrphan, uint64(q)+1), false, func(k, _ []byte) bool {
			out[string(k[9:])]++
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c incCandidates) lite(id string) (*store.CandidateLite, error) {
	l, err := c.m.tx.CandidateLite(id)
	if err == nil && l == nil {
		err = errCorrupt
	}
	return l, err
}

func (c incCandidates) created(id string) (time.Time, error) {
	l, err := c.lite(id)
	if err != nil {
		return time.Time{}, err
	}
	return l.CreatedAt, nil
}

// orphan marks a title or similar candidate whose group is gone, and
// indexes its tasks.
func (m *miner) orphan(id string) error {
	l, err := m.tx.CandidateLite(id)
	if err != nil || l == nil || (l.Kind != KindTitle && l.Kind != KindSimilar) {
		return err
	}
	mark, err := m.kv.get(orphanMark(id))
	if err != nil || mark != nil {
		return err
	}
	refs, err := m.tx.CandidateSources(id)
	if err != nil {
		return err
	}
	m.kv.put(orphanMark(id), []byte{})
	for _, r := range refs {
		m.kv.put(orphanKey(r.Seq, id), []byte{})
	}
	return nil
}

// unorphan undoes orphan, for a candidate a group took (back) over.
func (m *miner) unorphan(id string) error {
	mark, err := m.kv.get(orphanMark(id))
	if err != nil || mark == nil {
		return err
	}
	refs, err := m.tx.CandidateSources(id)
	if err != nil {
		return err
	}
	m.kv.del(orphanMark(id))
	for _, r := range refs {
		m.kv.del(orphanKey(r.Seq, id))
	}
	return nil
}

func (m *miner) settleAndWrite() (ScanResult, error) {
	m.made = map[uint64]*output{}
	if err := m.resettle(); err != nil {
		return ScanResult{}, err
	}
	outs := map[uint64]*ioutput{}
	if err := m.regroupOutputs(outs, false); err != nil {
		return ScanResult{}, err
	}
	if err := m.applyDiffs(outs, false); err != nil {
		return ScanResult{}, err
	}
	for _, io := range outs {
		if err := m.finish(io); err != nil {
			return ScanResult{}, err
		}
	}
	size := func(h uint64) (int, error) {
		if io := outs[h]; io != nil {
			return io.o.stats.n, nil
		}
		o, err := m.loadOutput(h)
		if err != nil || o == nil {
			return 0, errorsOr(err, errCorrupt)
		}
		return o.stats.n, nil
	}
	if err := m.settleTags(size); err != nil {
		return ScanResult{}, err
	}
	if err := m.regroupOutputs(outs, true); err != nil {
		return ScanResult{}, err
	}
	if err := m.applyDiffs(outs, true); err != nil {
		return ScanResult{}, err
	}
	for _, io := range outs {
		if io.o.kind == KindTag {
			if err := m.finish(io); err != nil {
				return ScanResult{}, err
			}
		}
	}
	// Settled groups left without tasks are gone: their candidates are
	// orphans now (title and similar ones).
	var gone []uint64
	for h, io := range outs {
		if io.o.stats.n == 0 {
			gone = append(gone, h)
		}
	}
	slices.Sort(gone)
	for _, h := range gone {
		io := outs[h]
		delete(outs, h)
		if io.old != nil && io.old.cand != "" {
			if err := m.orphan(io.old.cand); err != nil {
				return ScanResult{}, err
			}
		}
		m.kv.del(key1(keyOutput, h))
		m.kv.del(key1(keyContent, h))
	}
	return m.reconcileAndWrite(outs)
}

// regroupOutputs brings the settled groups up to date with where their
// groups settled (tag groups, or the others): which groups they hold, the
// size and text header of the group they stand for, and the tasks that
// move with a group that settled elsewhere (m.reout).
func (m *miner) regroupOutputs(outs map[uint64]*ioutput, tags bool) error {
	gids := make([]uint64, 0, len(m.outBefore))
	for gid := range m.outBefore {
		if (gidKind(gid) == gidTag) == tags {
			gids = append(gids, gid)
		}
	}
	slices.Sort(gids)
	for _, gid := range gids {
		ob := m.outBefore[gid]
		g, err := m.s.group(gid)
		if err != nil {
			return err
		}
		var now uint64
		if g != nil && g.into == 0 {
			now = g.out
		}
		if now != ob {
			if ob != 0 {
				io, err := m.touch(outs, ob, tags)
				if err != nil {
					return err
				}
				if io != nil {
					io.o.parts = slices.DeleteFunc(io.o.parts, func(p uint64) bool { return p == gid })
				}
			}
			if now != 0 {
				io, err := m.touch(outs, now, tags)
				if err != nil {
					return err
				}
				if io != nil && !slices.Contains(io.o.parts, gid) {
					io.o.parts = append(io.o.parts, gid)
				}
			}
			if g != nil && g.into == 0 {
				ms, err := m.s.members(g)
				if err != nil {
					return err
				}
				for _, q := range ms {
					m.reout[q] = true
				}
			}
		}
		if g == nil || g.into != 0 || now == 0 {
			continue
		}
		// The group it stands for, if kept: its size orders the settled
		// group, its proposal's name is the text's.
		key, err := m.groupKeyNow(g)
		if err != nil {
			return err
		}
		if outputHash("", key) != now {
			continue
		}
		io, err := m.touch(outs, now, tags)
		if err != nil || io == nil {
			return err
		}
		io.o.own = g.size
		if err := m.describe(io.o, gid); err != nil {
			return err
		}
		io.o.parts = slices.DeleteFunc(io.o.parts, func(p uint64) bool { return p == gid })
		io.o.parts = append([]uint64{gid}, io.o.parts...)
	}
	for _, io := range outs {
		if len(io.o.parts) > 1 {
			rest := io.o.parts[1:]
			slices.Sort(rest)
		}
	}
	return nil
}

func (m *miner) reconcileAndWrite(outs map[uint64]*ioutput) (ScanResult, error) {
	// Which settled groups to reconcile: those that changed, and those
	// whose candidates a person changed since the last scan.
	process := map[uint64]*ioutput{}
	for h, io := range outs {
		if io.changed || io.old == nil {
			process[h] = io
		}
	}
	decided, _, err := m.metaU(metaDecided)
	if err != nil {
		return ScanResult{}, err
	}
	ids, lastDec, err := m.tx.DecisionsAfter(int64(decided))
	if err != nil {
		return ScanResult{}, err
	}
	var keys []string
	for _, id := range ids {
		if l, err := m.tx.CandidateLite(id); err != nil {
			return ScanResult{}, err
		} else if l != nil {
			keys = append(keys, l.GroupKey)
		}
	}
	growth, _, err := m.metaU(metaGrowth)
	if err != nil {
		return ScanResult{}, err
	}
	if growth != math.Float64bits(m.o.ReopenGrowth) {
		lites, err := m.tx.CandidatesLite()
		if err != nil {
			return ScanResult{}, err
		}
		for _, l := range lites {
			if l.Status == store.SkillRejected {
				keys = append(keys, l.GroupKey)
			}
		}
	}
	for _, k := range keys {
		h := outputHash("", k)
		if process[h] != nil {
			continue
		}
		io, err := m.touch(outs, h, strings.HasPrefix(k, KindTag+":"))
		if err != nil {
			return ScanResult{}, err
		}
		if io != nil && io.o.key == k {
			process[h] = io
		}
	}
	list := make([]*ioutput, 0, len(process))
	for _, io := range process {
		list = append(list, io)
	}
	sort.Slice(list, func(i, j int) bool { return outputLess(list[i].o, list[j].o) })
	groups := make([]*rgroup, len(list))
	for i, io := range list {
		io := io
		groups[i] = &rgroup{
			out:     io.o,
			ct:      func() (content, error) { return m.content(io) },
			members: func() ([]int64, error) { return m.allMembers(io) },
			same: func(id string) (bool, error) {
				if io.old != nil && io.old.cand == id {
					// Its sources are the members it had.
					return io.old.mfp == io.o.mfp, nil
				}
				refs, err := m.tx.CandidateSources(id)
				if err != nil {
					return false, err
				}
				ms, err := m.allMembers(io)
				if err != nil {
					return false, err
				}
				if len(refs) != len(ms) {
					return false, nil
				}
				for k, r := range refs {
					if r.Seq != ms[k] {
						return false, nil
					}
				}
				return true, nil
			},
		}
	}
	changes, results, err := reconcile(groups, incCandidates{m}, m.o, map[string]bool{})
	if err != nil {
		return ScanResult{}, err
	}
	// Candidates matched by key or taken over stop being orphans.
	for _, io := range list {
		if io.o.cand != "" {
			if err := m.unorphan(io.o.cand); err != nil {
				return ScanResult{}, err
			}
		}
	}
	// Store the touched settled groups.
	for _, io := range outs {
		if io.o.cand == "" && io.old != nil {
			io.o.cand = io.old.cand
		}
		if io.old == nil || io.changed || io.o.cand != io.old.cand || process[io.o.hash] != nil || !slices.Equal(io.o.parts, io.old.parts) {
			m.kv.put(key1(keyOutput, io.o.hash), encodeOutput(io.o))
		}
	}
	m.s.flush()
	if err := m.writeMeta(lastDec); err != nil {
		return ScanResult{}, err
	}
	if err := m.kv.flush(m.tx); err != nil {
		return ScanResult{}, err
	}
	at := m.o.Now()
	byHash := map[uint64]*ioutput{}
	for _, io := range list {
		byHash[io.o.hash] = io
	}
	for _, ch := range changes {
		io := byHash[ch.g.out.hash]
		c := ch.c
		if ch.body {
			ct, err := m.contentBody(io.o.hash)
			if err != nil {
				return ScanResult{}, err
			}
			c.Body = ct
		}
		if err := m.tx.PutCandidate(c, ch.prev, ch.prev != nil && !ch.body, "scan", at); err != nil {
			return ScanResult{}, err
		}
		if !ch.sources {
			continue
		}
		if io.old != nil && io.old.cand == c.ID {
			var add []store.SourceRef
			for q, r := range io.adds {
				add = append(add, store.SourceRef{Seq: q, ID: r.id})
			}
			sort.Slice(add, func(i, j int) bool { return add[i].Seq < add[j].Seq })
			var remove []int64
			for q := range io.removes {
				remove = append(remove, q)
			}
			slices.Sort(remove)
			if err := m.tx.EditSources(c.ID, add, remove); err != nil {
				return ScanResult{}, err
			}
			continue
		}
		ms, err := m.allMembers(io)
		if err != nil {
			return ScanResult{}, err
		}
		refs := make([]store.SourceRef, len(ms))
		for k, q := range ms {
			r, err := m.rec(q)
			if err != nil || r == nil {
				return ScanResult{}, errorsOr(err, errCorrupt)
			}
			refs[k] = store.SourceRef{Seq: q, ID: r.id}
		}
		if err := m.tx.SetSources(c.ID, refs); err != nil {
			return ScanResult{}, err
		}
	}
	if err := m.tx.DeleteChanges(m.lastCh); err != nil {
		return ScanResult{}, err
	}
	if err := m.tx.Watch(m.maxSeq); err != nil {
		return ScanResult{}, err
	}
	res := ScanResult{Tasks: int(m.finished), Candidates: results}
	if !m.o.OnlyChanges {
		all, err := m.allResults(byHash, results)
		if err != nil {
			return ScanResult{}, err
		}
		res.Candidates = all
	}
	return res, nil
}

func (m *miner) contentBody(hash uint64) (string, error) {
	v, err := m.kv.get(key1(keyContent, hash))
	if err != nil {
		return "", err
	}
	if v == nil {
		return "", errCorrupt
	}
	_, ct, err := decodeContent(v)
	return ct.body, err
}

func (m *miner) writeMeta(lastDecision int64) error {
	u := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	m.cur.seq = m.maxSeq
	m.cur.gen++
	m.kv.put(metaKey(metaCursor), encodeCursor(m.cur))
	m.kv.put(metaKey(metaTasks), u(uint64(m.finished)))
	m.kv.put(metaKey(metaOrders), u(m.orders))
	m.kv.put(metaKey(metaClusters), u(m.clusters))
	m.kv.put(metaKey(metaDecided), u(uint64(lastDecision)))
	m.kv.put(metaKey(metaGrowth), u(math.Float64bits(m.o.ReopenGrowth)))
	return nil
}

// allResults lists every settled group with its candidate, in order: the
// reconciled ones as reconcile said, the others unchanged.
func (m *miner) allResults(processed map[uint64]*ioutput, results []ScanCandidate) ([]ScanCandidate, error) {
	var all []*output
	var derr error
	err := m.tx.Range([]byte{keyOutput}, []byte{keyOutput + 1}, false, func(k, v []byte) bool {
		o, err := decodeOutput(beUint64(k[1:]), v)
		if err != nil {
			derr = err
			return false
		}
		all = append(all, o)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return outputLess(all[i], all[j]) })
	lites, err := m.tx.CandidatesLite()
	if err != nil {
		return nil, err
	}
	byID := map[string]*store.CandidateLite{}
	for i := range lites {
		byID[lites[i].ID] = &lites[i]
	}
	var order []*ioutput
	for _, io := range processed {
		order = append(order, io)
	}
	sort.Slice(order, func(i, j int) bool { return outputLess(order[i].o, order[j].o) })
	done := map[uint64]ScanCandidate{}
	for i, io := range order {
		done[io.o.hash] = results[i]
	}
	out := make([]ScanCandidate, 0, len(all))
	for _, o := range all {
		if r, ok := done[o.hash]; ok {
			out = append(out, r)
			continue
		}
		c := byID[o.cand]
		if c == nil {
			return nil, errCorrupt
		}
		out = append(out, ScanCandidate{Name: c.Name, Description: c.Description, Kind: o.kind, Status: c.Status,
			Tasks: o.stats.n, Change: ChangeUnchanged})
	}
	return out, nil
}
