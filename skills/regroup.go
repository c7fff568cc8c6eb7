package skills

import (
	"maps"
	"slices"
	"sort"
)

// markDirty notes that a group changed, remembering which settled group it
// was in before, and its size.
func (m *miner) markDirty(gid uint64, g *group) {
	if _, ok := m.outBefore[gid]; !ok {
		var out uint64
		if g != nil {
			out = g.out
		}
		m.outBefore[gid] = out
	}
	if _, ok := m.sizeBefore[gid]; !ok {
		size := 0
		if g != nil && g.into == 0 {
			size = g.size
		}
		m.sizeBefore[gid] = size
	}
	m.dirty[gid] = true
}

// rec is the record of seq as this scan leaves it.
func (m *miner) rec(seq int64) (*record, error) {
	if r, ok := m.after[seq]; ok {
		return r, nil
	}
	return m.s.record(seq)
}

// groupKey is the key of a title, tag or proposal group of record r.
func groupKeyOf(gid uint64, r *record, keyOf map[uint64]string) string {
	if gidKind(gid) == gidProposal {
		return proposalKey(r.propName)
	}
	return keyOf[gid]
}

// join adds a finished task to a title, tag or proposal group.
func (m *miner) join(gid uint64, r *record) error {
	g, err := m.s.group(gid)
	if err != nil {
		return err
	}
	m.markDirty(gid, g)
	if g == nil {
		g = &group{gid: gid, key: groupKeyOf(gid, r, m.keyOf)}
		if g.key == "" {
			return errCorrupt
		}
	}
	if err := m.addMember(g, r.seq); err != nil {
		return err
	}
	if r.status == codeDone {
		g.done++
	}
	if gidKind(gid) == gidProposal && r.seq >= g.latest {
		g.latest, g.name, g.doc = r.seq, r.propName, r.propDoc
	}
	m.s.putGroup(g)
	if gidKind(gid) == gidTitle {
		return m.raiseLinked(g)
	}
	return nil
}

// leave takes a task out of a title, tag or proposal group.
func (m *miner) leave(gid uint64, r *record) error {
	g, err := m.s.group(gid)
	if err != nil {
		return err
	}
	if g == nil {
		return errCorrupt
	}
	m.markDirty(gid, g)
	if err := m.removeMember(g, r.seq); err != nil {
		return err
	}
	if r.status == codeDone {
		g.done--
	}
	if g.size == 0 {
		m.s.dropGroup(gid)
		return nil
	}
	if gidKind(gid) == gidProposal && r.seq == g.latest {
		last, err := m.s.latestMembers(g, 1)
		if err != nil {
			return err
		}
		lr, err := m.rec(last[0])
		if err != nil || lr == nil {
			return errorsOr(err, errCorrupt)
		}
		g.latest, g.name, g.doc = lr.seq, lr.propName, lr.propDoc
	}
	m.s.putGroup(g)
	return nil
}

func errorsOr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// addMember puts seq among g's members: in its entry while they are few,
// in chunks once there are more.
func (m *miner) addMember(g *group, seq int64) error {
	g.size++
	if g.size == 1 || seq < g.first {
		g.first = seq
	}
	switch {
	case g.size <= inlineMembers:
		i, _ := slices.BinarySearch(g.inline, seq)
		g.inline = slices.Insert(g.inline, i, seq)
		return nil
	case g.size == inlineMembers+1:
		ms := append(append([]int64(nil), g.inline...), seq)
		slices.Sort(ms)
		g.inline = nil
		return m.s.memberList(g.gid).edit(ms, nil)
	}
	return m.s.memberList(g.gid).edit([]int64{seq}, nil)
}

// removeMember takes seq out of g's members.
func (m *miner) removeMember(g *group, seq int64) error {
	if g.size == 0 {
		return errCorrupt
	}
	g.size--
	switch {
	case g.size < inlineMembers:
		i, ok := slices.BinarySearch(g.inline, seq)
		if !ok {
			return errCorrupt
		}
		g.inline = slices.Delete(g.inline, i, i+1)
	case g.size == inlineMembers:
		l := m.s.memberList(g.gid)
		ms, err := l.all()
		if err != nil {
			return err
		}
		if err := l.drop(); err != nil {
			return err
		}
		i, ok := slices.BinarySearch(ms, seq)
		if !ok {
			return errCorrupt
		}
		g.inline = slices.Delete(ms, i, i+1)
	default:
		if err := m.s.memberList(g.gid).edit(nil, []int64{seq}); err != nil {
			return err
		}
	}
	if g.size == 0 {
		g.first = 0
		return nil
	}
	if seq == g.first {
		if g.size <= inlineMembers {
			g.first = g.inline[0]
			return nil
		}
		var first int64
		err := m.kv.scan(key2(keyList, g.gid, 0), key2(keyList, g.gid+1, 0), false, func(k, v []byte) bool {
			seqs, err := decodeSeqs(int64(beUint64(k[9:])), v)
			if err == nil && len(seqs) > 0 {
				first = seqs[0]
			}
			return false
		})
		if err != nil {
			return err
		}
		g.first = first
	}
	return nil
}

// addLink changes how many finished tasks groups a and b share. Both
// must exist; neither is marked changed by it.
func (m *miner) addLink(a, b uint64, delta int) error {
	if a == 0 || b == 0 || delta == 0 {
		return nil
	}
	for _, p := range [][2]uint64{{a, b}, {b, a}} {
		g, err := m.s.group(p[0])
		if err != nil {
			return err
		}
		if g == nil {
			return errCorrupt
		}
		if g.links == nil {
			g.links = map[uint64]int{}
		}
		g.links[p[1]] += delta
		switch n := g.links[p[1]]; {
		case n < 0:
			return errCorrupt
		case n == 0:
			delete(g.links, p[1])
		}
		if gidKind(g.gid) == gidCluster && gidKind(p[1]) == gidTitle && delta > 0 {
			t, err := m.s.group(p[1])
			if err != nil || t == nil {
				return errorsOr(err, errCorrupt)
			}
			g.maxLinked = max(g.maxLinked, t.size)
		}
		m.s.putGroup(g)
	}
	return nil
}

// raiseLinked tells the clusters title group t shares tasks with that it
// grew.
func (m *miner) raiseLinked(t *group) error {
	for n := range t.links {
		if gidKind(n) != gidCluster {
			continue
		}
		c, err := m.s.group(n)
		if err != nil || c == nil {
			return errorsOr(err, errCorrupt)
		}
		if t.size > c.maxLinked {
			c.maxLinked = t.size
			m.s.putGroup(c)
		}
	}
	return nil
}

// links returns the groups gid shares finished tasks with, and how many.
func (m *miner) links(gid uint64) (map[uint64]int, error) {
	g, err := m.s.group(gid)
	if err != nil || g == nil {
		return nil, err
	}
	return maps.Clone(g.links), nil
}

// dropLinks removes every link of cluster c.
func (m *miner) dropLinks(c uint64) error {
	ls, err := m.links(c)
	if err != nil {
		return err
	}
	for other, n := range ls {
		if err := m.addLink(other, c, -n); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows merged clusters to the live one.
func (m *miner) resolve(c uint64) (uint64, error) {
	start := c
	for {
		if r, ok := m.roots[c]; ok && r != c {
			c = r
			continue
		}
		g, err := m.s.group(c)
		if err != nil {
			return 0, err
		}
		if g == nil || g.into == 0 {
			m.roots[start] = c
			return c, nil
		}
		c = g.into
	}
}

// clusterRow returns the row of live cluster c, making one for a cluster
// of one (member) that has none.
func (m *miner) clusterRow(c uint64, member *record) (*group, error) {
	g, err := m.s.group(c)
	if err != nil {
		return nil, err
	}
	if g != nil {
		return g, nil
	}
	g = &group{gid: c, size: 1, first: member.seq, inline: []int64{member.seq}}
	if member.status == codeDone {
		g.done = 1
	}
	return g, nil
}

// union merges the clusters of a and b (each with a member known, for a
// cluster of one): the smaller goes into the larger.
func (m *miner) union(a uint64, ma *record, b uint64, mb *record) error {
	ra, err := m.resolve(a)
	if err != nil {
		return err
	}
	rb, err := m.resolve(b)
	if err != nil {
		return err
	}
	if ra == rb {
		return nil
	}
	ga, err := m.clusterRow(ra, ma)
	if err != nil {
		return err
	}
	gb, err := m.clusterRow(rb, mb)
	if err != nil {
		return err
	}
	if gb.size > ga.size || (gb.size == ga.size && rb < ra) {
		ga, gb, ma, mb = gb, ga, mb, ma
	}
	for _, g := range []uint64{ga.gid, gb.gid} {
		row, err := m.s.group(g)
		if err != nil {
			return err
		}
		m.markDirty(g, row)
	}
	// The members of the absorbed cluster move.
	absorbed, err := m.s.members(gb)
	if err != nil {
		return err
	}
	absorbed = slices.Clone(absorbed)
	m.s.putGroup(ga)
	m.s.putGroup(gb)
	if ga.size == 1 {
		// A cluster of one had no links yet.
		if err := m.addClusterLinks(ga.gid, ma, 1); err != nil {
			return err
		}
	}
	if gb.size == 1 {
		if err := m.addClusterLinks(ga.gid, mb, 1); err != nil {
			return err
		}
	} else {
		ls, err := m.links(gb.gid)
		if err != nil {
			return err
		}
		for other, n := range ls {
			if err := m.addLink(other, gb.gid, -n); err != nil {
				return err
			}
			if err := m.addLink(other, ga.gid, n); err != nil {
				return err
			}
		}
		if gb.size > inlineMembers {
			if err := m.s.memberList(gb.gid).drop(); err != nil {
				return err
			}
		}
	}
	m.s.putGroup(ga)
	for _, q := range absorbed {
		if err := m.addMember(ga, q); err != nil {
			return err
		}
		mv := m.moved[q]
		if _, ok := m.moved[q]; !ok {
			mv[0] = gb.gid
		}
		mv[1] = ga.gid
		m.moved[q] = mv
	}
	ga.done += gb.done
	ga.maxLinked = max(ga.maxLinked, gb.maxLinked)
	if gb.size > 1 {
		m.relinked[ga.gid] = true // its links gathered another's
	}
	m.s.putGroup(ga)
	m.s.putGroup(&group{gid: gb.gid, into: ga.gid})
	m.roots[gb.gid] = ga.gid
	return nil
}

// addClusterLinks counts r's title and proposal as sharing it with
// cluster c.
func (m *miner) addClusterLinks(c uint64, r *record, delta int) error {
	if err := m.addLink(r.title, c, delta); err != nil {
		return err
	}
	return m.addLink(r.prop, c, delta)
}

// regroup moves the tasks this scan read in and out of their groups.
func (m *miner) regroup() error {
	seqs := make([]int64, 0, len(m.after))
	for q := range m.after {
		seqs = append(seqs, q)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	// Where each moving task's cluster was, before any change.
	oldRoot := map[int64]uint64{}
	for _, q := range seqs {
		if b := m.before[q]; b != nil && b.finishedOK() && b.cluster != 0 {
			r, err := m.resolve(b.cluster)
			if err != nil {
				return err
			}
			oldRoot[q] = r
		}
	}
	m.oldRoot = oldRoot
	// Out of the groups first, then in; the links between groups before
	// the groups, which may go.
	removed := map[uint64][]*record{}
	for _, q := range seqs {
		b := m.before[q]
		if b == nil || !b.finishedOK() {
			continue
		}
		if err := m.addLink(b.prop, b.title, -1); err != nil {
			return err
		}
		if r, ok := oldRoot[q]; ok {
			removed[r] = append(removed[r], b)
			if g, err := m.s.group(r); err != nil {
				return err
			} else if g != nil {
				if err := m.addClusterLinks(r, b, -1); err != nil {
					return err
				}
			}
		}
	}
	for _, q := range seqs {
		if b := m.before[q]; b != nil && b.finishedOK() {
			if err := m.leaveAll(b); err != nil {
				return err
			}
		}
	}
	roots := make([]uint64, 0, len(removed))
	for r := range removed {
		roots = append(roots, r)
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i] < roots[j] })
	for _, r := range roots {
		if err := m.shrink(r, removed[r]); err != nil {
			return err
		}
	}
	for _, q := range seqs {
		a := m.after[q]
		a.cluster = 0
		if !a.finishedOK() {
			continue
		}
		if err := m.joinAll(a); err != nil {
			return err
		}
	}
	for _, q := range seqs {
		a := m.after[q]
		if a.finishedOK() && len(a.set) >= 2 {
			if err := m.place(a); err != nil {
				return err
			}
		}
	}
	for _, q := range seqs {
		a := m.after[q]
		if b := m.before[q]; b != nil && b.finishedOK() {
			m.finished--
		}
		if a.finishedOK() {
			m.finished++
		}
		if err := m.s.putRecord(a); err != nil {
			return err
		}
	}
	return nil
}

func (m *miner) leaveAll(r *record) error {
	if r.title != 0 {
		if err := m.leave(r.title, r); err != nil {
			return err
		}
	}
	for _, t := range r.tags {
		if err := m.leave(t, r); err != nil {
			return err
		}
	}
	if r.prop != 0 {
		if err := m.leave(r.prop, r); err != nil {
			return err
		}
	}
	return nil
}

func (m *miner) joinAll(r *record) error {
	if r.title != 0 {
		if err := m.join(r.title, r); err != nil {
			return err
		}
	}
	for _, t := range r.tags {
		if err := m.join(t, r); err != nil {
			return err
		}
	}
	if r.prop != 0 {
		if err := m.join(r.prop, r); err != nil {
			return err
		}
		if err := m.addLink(r.prop, r.title, 1); err != nil {
			return err
		}
	}
	return nil
}

// unindex takes a task out of the similarity index.
func (m *miner) unindex(r *record) error {
	p, _ := prefixLen(len(r.set), m.o.Similarity)
	for _, o := range r.set[:p] {
		if err := m.s.postingList(o).edit(nil, []int64{r.seq}); err != nil {
			return err
		}
	}
	return nil
}

// index puts a task in the similarity index under its cluster.
func (m *miner) index(r *record, cluster uint64) error {
	p, _ := prefixLen(len(r.set), m.o.Similarity)
	sk := sketchOf(r.set)
	for _, o := range r.set[:p] {
		if err := m.s.postingList(o).edit([]posting{{seq: r.seq, n: len(r.set), cluster: cluster, sketch: sk}}, nil); err != nil {
			return err
		}
	}
	return nil
}

// shrink takes tasks out of cluster c. What is left may fall apart: the
// cluster is then split, the largest part keeping its id.
func (m *miner) shrink(c uint64, gone []*record) error {
	for _, r := range gone {
		if len(r.set) >= 2 {
			if err := m.unindex(r); err != nil {
				return err
			}
		}
	}
	g, err := m.s.group(c)
	if err != nil {
		return err
	}
	m.markDirty(c, g)
	if g == nil {
		return nil // a cluster of one, now empty
	}
	ms, err := m.s.members(g)
	if err != nil {
		return err
	}
	isGone := map[int64]bool{}
	for _, r := range gone {
		isGone[r.seq] = true
	}
	var left []*record
	for _, q := range ms {
		if isGone[q] {
			continue
		}
		r, err := m.rec(q)
		if err != nil || r == nil {
			return errorsOr(err, errCorrupt)
		}
		left = append(left, r)
	}
	if g.size > inlineMembers {
		if err := m.s.memberList(c).drop(); err != nil {
			return err
		}
	}
	if err := m.dropLinks(c); err != nil {
		return err
	}
	g.size, g.inline, g.done = 0, nil, 0
	if len(left) <= 1 {
		// Nothing, or a cluster of one, which needs no row: its member's
		// references still lead here. That member leaves the settled group
		// the cluster was in.
		m.s.dropGroup(c)
		for _, r := range left {
			m.reout[r.seq] = true
		}
		return nil
	}
	uf := clusterRecords(left, m.o.Similarity)
	m.relinked[c] = true
	parts := map[int32][]*record{}
	var order []int32
	for i := range left {
		root := uf.find(int32(i))
		if _, ok := parts[root]; !ok {
			order = append(order, root)
		}
		parts[root] = append(parts[root], left[i])
	}
	sort.SliceStable(order, func(i, j int) bool { return len(parts[order[i]]) > len(parts[order[j]]) })
	for n, root := range order {
		part := parts[root]
		id := c
		if n > 0 {
			id = gidCluster<<60 | m.clusters
			m.clusters++
			m.markDirty(id, nil)
			m.relinked[id] = true
			for _, r := range part {
				// Re-index under the new cluster: the old id leads to the
				// largest part.
				nr := *r
				nr.cluster = id
				if _, ok := m.after[r.seq]; ok {
					m.after[r.seq] = &nr
				} else if err := m.s.putRecord(&nr); err != nil {
					return err
				}
				if err := m.index(&nr, id); err != nil {
					return err
				}
				mv, ok := m.moved[r.seq]
				if !ok {
					mv[0] = c
				}
				mv[1] = id
				m.moved[r.seq] = mv
			}
		}
		if len(part) == 1 {
			if n == 0 {
				m.s.dropGroup(c)
				m.reout[part[0].seq] = true
			}
			continue
		}
		ng := &group{gid: id}
		if id == c {
			ng = g
		}
		m.s.putGroup(ng)
		for _, r := range part {
			if err := m.addMember(ng, r.seq); err != nil {
				return err
			}
			if r.status == codeDone {
				ng.done++
			}
			if err := m.addClusterLinks(id, r, 1); err != nil {
				return err
			}
		}
		m.s.putGroup(ng)
	}
	return nil
}

// clusterRecords clusters the sets of some tasks, as the full scan would.
func clusterRecords(rs []*record, t float64) unionFind {
	ids := map[uint64]int32{}
	var freq []int32
	sets := make([][]int32, len(rs))
	for i, r := range rs {
		set := make([]int32, len(r.set))
		for k, o := range r.set {
			id, ok := ids[o]
			if !ok {
				id = int32(len(freq))
				ids[o] = id
				freq = append(freq, 0)
			}
			freq[id]++
			set[k] = id
		}
		slices.Sort(set)
		sets[i] = set
	}
	return clusterSimilar(sets, freq, t, nil)
}

// place finds the clusters a newly finished task joins, through the
// similarity index, and indexes it.
func (m *miner) place(x *record) error {
	t := m.o.Similarity
	id := gidCluster<<60 | m.clusters
	m.clusters++
	x.cluster = id
	p, kx := prefixLen(len(x.set), t)
	xs := sketchOf(x.set)
	// The index is read a chunk at a time, and only the sets that may be
	// alike (length, sketch) are kept: on a long history the lists of
	// frequent tokens are long.
	count := map[int64]int{}
	hint := map[int64]posting{}
	for _, o := range x.set[:p] {
		var derr error
		err := m.kv.scan(key2(keyPosting, o, 0), key2(keyPosting, o+1, 0), false, func(k, v []byte) bool {
			derr = eachPosting(int64(beUint64(k[9:])), v, func(e posting) bool {
				if e.seq == x.seq {
					return true
				}
				if float64(e.n) < t*float64(len(x.set))-1e-9 || t*float64(e.n) > float64(len(x.set))+1e-9 {
					return true
				}
				if _, ok := count[e.seq]; !ok && !xs.mayShare(e.sketch, overlapFloor(t, len(x.set), e.n)) {
					return true
				}
				count[e.seq]++
				hint[e.seq] = e
				return true
			})
			return derr == nil
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
	}
	var cands []int64
	for q, n := range count {
		_, ky := prefixLen(hint[q].n, t)
		if n >= min(kx, ky) {
			cands = append(cands, q)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if count[cands[i]] != count[cands[j]] {
			return count[cands[i]] > count[cands[j]]
		}
		return cands[i] < cands[j]
	})
	for _, q := range cands {
		mine, err := m.resolve(x.cluster)
		if err != nil {
			return err
		}
		theirs, err := m.resolve(hint[q].cluster)
		if err != nil {
			return err
		}
		if mine == theirs {
			continue
		}
		// Most candidates are not alike: their records are read without
		// keeping their chunks, which lie all over a long history.
		y, ok := m.after[q]
		if !ok {
			var err error
			if y, err = m.s.peekRecord(q); err != nil {
				return err
			}
		}
		if y == nil {
			return errCorrupt
		}
		if !similarAtLeast(x.set, y.set, t) {
			continue
		}
		if y, err = m.rec(q); err != nil || y == nil {
			return errorsOr(err, errCorrupt)
		}

		if err := m.union(mine, x, theirs, y); err != nil {
			return err
		}
	}
	root, err := m.resolve(x.cluster)
	if err != nil {
		return err
	}
	x.cluster = root
	return m.index(x, root)
}
