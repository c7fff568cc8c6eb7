package skills

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// orderBase is the order of the rarest token at a full scan: tokens first
// seen later take the orders below it, so that they come first in the
// index, as the rarest do.
const orderBase = 1 << 32

// fullTasks is every task of the history, in seq order, as a full scan
// keeps it: compact, without its text.
type fullTasks struct {
	n         int
	seq       []int64
	idOff     []uint32
	idBuf     []byte
	role      []uint16
	roleNames []string
	status    []uint8
	finished  []int64
	title     []uint64
	tagOff    []uint32
	tagBuf    []uint64
	setOff    []uint32
	setBuf    []int32 // token numbers (numbered first seen first) in no order; after mineAll, ranks ascending
	prop      map[int32]store.Proposal
	keys      groupKeys // group keys of titles, tags and proposals
	// tokens, by number
	tokHash  []uint64
	tokCount []int64
	cluster  []uint32 // cluster number (clusterOf) of each finished task with a set of two or more; a full scan numbers them from 1, one per such task at most
	// roots are the tasks' record.root, by position; nil while no task
	// read has another task as the first of its chain (most histories).
	roots []uint64
}

// root is task i's record.root.
func (h *fullTasks) root(i int) uint64 {
	if h.roots == nil {
		return 0
	}
	return h.roots[i]
}

// chain is the chainKey of task i.
func (h *fullTasks) chain(i int32) uint64 { return chainKey(h.id(int(i)), h.root(int(i))) }

// finishedCount is how many of the tasks are finished.
func (h *fullTasks) finishedCount() int {
	n := 0
	for _, c := range h.status {
		if c != codeOpen {
			n++
		}
	}
	return n
}

func (h *fullTasks) id(i int) string { return string(h.idBuf[h.idOff[i]:h.idOff[i+1]]) }
func (h *fullTasks) tags(i int) []uint64 {
	return h.tagBuf[h.tagOff[i]:h.tagOff[i+1]]
}
func (h *fullTasks) set(i int) []int32 { return h.setBuf[h.setOff[i]:h.setOff[i+1]] }

// clusterOf is the gid of task i's cluster, or 0.
func (h *fullTasks) clusterOf(i int) uint64 {
	if h.cluster == nil || h.cluster[i] == 0 {
		return 0
	}
	return gidCluster<<60 | uint64(h.cluster[i])
}

// pos is the position of the task with seq s.
func (h *fullTasks) pos(s int64) (int, bool) {
	return slices.BinarySearch(h.seq, s)
}

// tokenNumbers numbers token hashes: open addressing with linear probing,
// twice as large as it holds at least. A full scan asks it for every token
// of every task, in the one goroutine that cannot be spread over the CPUs;
// a Go map took twice as long.
type tokenNumbers struct {
	hash []uint64 // 0: empty (the hash 0 is kept apart)
	num  []int32
	n    int
	zero int32 // the number of the hash 0, plus one
}

func (t *tokenNumbers) get(h uint64) (int32, bool) {
	if h == 0 {
		return t.zero - 1, t.zero > 0
	}
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.hash) - 1)
	for i := mix64(h) & mask; ; i = (i + 1) & mask {
		switch t.hash[i] {
		case h:
			return t.num[i], true
		case 0:
			return 0, false
		}
	}
}

// put numbers h, which get did not find.
func (t *tokenNumbers) put(h uint64, num int32) {
	if h == 0 {
		t.zero = num + 1
		return
	}
	if 2*(t.n+1) > len(t.hash) {
		old, oldNum := t.hash, t.num
		size := max(1024, 2*len(old))
		t.hash, t.num, t.n = make([]uint64, size), make([]int32, size), 0
		for i, x := range old {
			if x != 0 {
				t.put(x, oldNum[i])
			}
		}
	}
	mask := uint64(len(t.hash) - 1)
	i := mix64(h) & mask
	for t.hash[i] != 0 {
		i = (i + 1) & mask
	}
	t.hash[i], t.num[i] = h, num
	t.n++
}

// groupKeys holds the keys of groups, by gid, in one buffer: a map of
// strings gave the collector a pointer to follow per group, at every one
// of a long scan's collections.
type groupKeys struct {
	at  map[uint64]uint32 // where a key starts in buf: its length, then it
	buf []byte
}

func (k *groupKeys) put(gid uint64, key string) {
	if _, ok := k.at[gid]; ok {
		return
	}
	k.at[gid] = uint32(len(k.buf))
	k.buf = binary.AppendUvarint(k.buf, uint64(len(key)))
	k.buf = append(k.buf, key...)
}

func (k *groupKeys) get(gid uint64) string {
	at, ok := k.at[gid]
	if !ok {
		return ""
	}
	n, w := binary.Uvarint(k.buf[at:])
	start := int(at) + w
	return string(k.buf[start : start+int(n)])
}

// rawTask is a task read for a full scan, tokenised by a worker.
type rawTask struct {
	seq               int64
	id, role, status  string
	finished          int64
	title, body, tags string
	root              string
	toks              []uint64
	titleGID          uint64
	titleKey          string // "" when the worker gave it for an earlier task
	tagGIDs           []uint64
	tagKeys           []string
	err               error
}

type rawBatch struct {
	tasks []rawTask
	pool  []uint64 // the tasks' token lists, one after the other
	done  chan struct{}
}

// readTasks reads every task up to upto, tokenising on all CPUs while the
// store is read, and keeps what mining needs. It reads the tasks in the
// order they are stored, and again by seq if that order is not theirs.
func readTasks(v *store.MineView, upto int64, total int, progress func(string, int, int)) (*fullTasks, error) {
	h, err := readTasksBy(v.EachStoredTask, v, upto, total, progress)
	if errors.Is(err, store.ErrNotInSeqOrder) {
		h, err = readTasksBy(v.EachTask, v, upto, total, progress)
	}
	return h, err
}

// readTasksBy is readTasks with each, which gives the tasks in seq order
// (or an error).
func readTasksBy(each func(after, upto int64, fn func(*store.MineTask) error) error, v *store.MineView, upto int64, total int,
	progress func(string, int, int)) (*fullTasks, error) {
	h := &fullTasks{prop: map[int32]store.Proposal{}, keys: groupKeys{at: map[uint64]uint32{}}}
	// Sized for the tasks counted: growing them as they fill would hold
	// up to twice as much for a while.
	h.seq = make([]int64, 0, total)
	h.idOff = make([]uint32, 1, total+1)
	h.idBuf = make([]byte, 0, total*16)
	h.role = make([]uint16, 0, total)
	h.status = make([]uint8, 0, total)
	h.finished = make([]int64, 0, total)
	h.title = make([]uint64, 0, total)
	h.tagOff = make([]uint32, 1, total+1)
	h.setOff = make([]uint32, 1, total+1)
	h.setBuf = make([]int32, 0, total*12)
	roleIdx := map[string]uint16{}
	var tokIdx tokenNumbers

	workers := cpus()
	const batchSize = 1024
	work := make(chan *rawBatch, workers*2)
	ordered := make(chan *rawBatch, workers*2)
	// Batches the consumer is done with are filled again: a new one each
	// time made most of a full scan's garbage, gigabytes at 1M tasks.
	free := make(chan *rawBatch, workers*2+2)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				buf, norm []byte
				scratch   []uint64
				seen      tokenSet
				// The gids whose keys this goroutine gave the consumer
				// already, by their low bits: tasks share tags and
				// titles, and the consumer, which cannot be spread over
				// the CPUs, looked every task's keys up.
				sent [1024]uint64
			)
			first := func(gid uint64) bool {
				s := &sent[gid%uint64(len(sent))]
				if *s == gid {
					return false
				}
				*s = gid
				return true
			}
			for b := range work {
				// A batch's token lists share one array, kept with the
				// batch for the next time it is filled.
				pool := b.pool[:0]
				for i := range b.tasks {
					t := &b.tasks[i]
					t.titleGID, t.titleKey, t.err = 0, "", nil
					t.tagKeys, t.tagGIDs = t.tagKeys[:0], t.tagGIDs[:0]
					scratch, buf = rawTokens(t.title, t.body, &seen, scratch, buf)
					at := len(pool)
					pool = append(pool, scratch...)
					t.toks = pool[at:len(pool):len(pool)]
					if norm, buf = appendNormTitle(norm[:0], t.title, buf); len(norm) > 0 {
						key := titleKey(t.role, string(norm))
						if t.titleGID = keyGID(gidTitle, key); first(t.titleGID) {
							t.titleKey = key
						}
					}
					tags, err := decodeTags(t.tags)
					if err != nil {
						t.err = fmt.Errorf("task %s: tags: %w", t.id, err)
					}
					for _, tag := range foldTags(tags) {
						k := tagKey(tag)
						gid := keyGID(gidTag, k)
						if !first(gid) {
							k = ""
						}
						t.tagKeys = append(t.tagKeys, k)
						t.tagGIDs = append(t.tagGIDs, gid)
					}
					t.title, t.body, t.tags = "", "", ""
				}
				b.pool = pool
				close(b.done)
			}
		}()
	}

	// The consumer takes the batches in order: counting tokens is
	// sequential, since a task's set depends on the tasks before it.
	consumed := make(chan error, 1)
	go func() {
		var err error
		for b := range ordered {
			<-b.done
			if err != nil {
				continue
			}
			for i := range b.tasks {
				t := &b.tasks[i]
				if t.err != nil {
					err = t.err
					break
				}
				k := int64(h.n)
				h.n++
				h.seq = append(h.seq, t.seq)
				h.idBuf = append(h.idBuf, t.id...)
				h.idOff = append(h.idOff, uint32(len(h.idBuf)))
				r, ok := roleIdx[t.role]
				if !ok {
					r = uint16(len(h.roleNames))
					roleIdx[t.role] = r
					h.roleNames = append(h.roleNames, t.role)
				}
				h.role = append(h.role, r)
				h.status = append(h.status, statusCode(t.status))
				if t.root != "" && h.roots == nil {
					h.roots = make([]uint64, k, cap(h.seq))
				}
				if h.roots != nil {
					h.roots = append(h.roots, rootHash(t.root))
				}
				h.finished = append(h.finished, t.finished)
				h.title = append(h.title, t.titleGID)
				// An empty key: its worker gave it for an earlier task.
				if t.titleKey != "" {
					h.keys.put(t.titleGID, t.titleKey)
				}
				for j, g := range t.tagGIDs {
					h.tagBuf = append(h.tagBuf, g)
					if t.tagKeys[j] != "" {
						h.keys.put(g, t.tagKeys[j])
					}
				}
				h.tagOff = append(h.tagOff, uint32(len(h.tagBuf)))
				limit := commonLimit(k)
				for _, tok := range t.toks {
					id, ok := tokIdx.get(tok)
					if !ok {
						id = int32(len(h.tokHash))
						tokIdx.put(tok, id)
						h.tokHash = append(h.tokHash, tok)
						h.tokCount = append(h.tokCount, 0)
					}
					if h.tokCount[id] <= limit {
						h.setBuf = append(h.setBuf, id)
					}
					h.tokCount[id]++
				}
				h.setOff = append(h.setOff, uint32(len(h.setBuf)))
			}
			if progress != nil {
				progress("reading", h.n, total)
			}
			select {
			case free <- b:
			default:
			}
		}
		consumed <- err
	}()

	next := func() *rawBatch {
		select {
		case b := <-free:
			b.tasks, b.done = b.tasks[:0], make(chan struct{})
			return b
		default:
			return &rawBatch{tasks: make([]rawTask, 0, batchSize), pool: make([]uint64, 0, 24*batchSize),
				done: make(chan struct{})}
		}
	}
	b := next()
	send := func() {
		work <- b
		ordered <- b
		b = next()
	}
	err := each(0, upto, func(t *store.MineTask) error {
		// The slot's slices are kept: the worker empties them.
		b.tasks = b.tasks[:len(b.tasks)+1]
		r := &b.tasks[len(b.tasks)-1]
		r.seq, r.id, r.role, r.status = t.Seq, t.ID, t.Role, t.Status
		r.finished, r.title, r.body, r.tags, r.root = unixNano(t.FinishedAt), t.Title, t.Body, t.Tags, t.Root
		if len(b.tasks) == batchSize {
			send()
		}
		return nil
	})
	if len(b.tasks) > 0 {
		send()
	}
	close(work)
	close(ordered)
	wg.Wait()
	if cerr := <-consumed; err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	err = v.AllProposals(upto, func(seq int64, p store.Proposal) error {
		i, ok := h.pos(seq)
		if ok && h.status[i] != codeOpen {
			h.prop[int32(i)] = p
		}
		return nil
	})
	return h, err
}

// decodeTags reads a task's tags, a JSON list of strings.
func decodeTags(s string) ([]string, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	if strings.IndexByte(s, '\\') < 0 && strings.HasPrefix(s, `["`) && strings.HasSuffix(s, `"]`) {
		return strings.Split(s[2:len(s)-2], `","`), nil
	}
	var out []string
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// fgroup is a group as a full scan builds it. It holds no pointers, nor
// do the groups' map and member lists: a long history has hundreds of
// thousands of groups, and the collector, which runs every few megabytes
// while the state is written, marked each group and its list every time.
type fgroup struct {
	gid    uint64
	off, n uint32 // its members, f.memberBuf[off:off+n]: positions, ascending
	done   int32
	latest int32 // proposals: the latest member
}

// fullBuild is a full scan's work: the groups of the whole history.
type fullBuild struct {
	o         ScanOptions
	h         *fullTasks
	groups    map[uint64]int32 // gid → its place in gs
	gs        []fgroup
	memberBuf []int32
	outOf     map[uint64]*output // gid → the output it settled in
	outputs   []*output
	members   map[*output][]int32
	rank      []int32 // token number → rank by frequency
	// nextCluster is the next cluster id.
	nextCluster uint64
}

// group is the group of gid, or nil.
func (f *fullBuild) group(gid uint64) *fgroup {
	if k, ok := f.groups[gid]; ok {
		return &f.gs[k]
	}
	return nil
}

// membersOf is the positions of g's members, ascending.
func (f *fullBuild) membersOf(g *fgroup) []int32 { return f.memberBuf[g.off : g.off+g.n : g.off+g.n] }

// enoughChains says whether g's tasks come from at least n chains of
// commands (chainKey): the parts of one order are one piece of work. In a
// history without chains every task is one.
func (f *fullBuild) enoughChains(g *fgroup, n int) bool {
	if f.h.roots == nil {
		return int(g.n) >= n
	}
	c := chainCounter{n: n}
	for _, i := range f.membersOf(g) {
		if c.add(f.h.chain(i)) {
			return true
		}
	}
	return n <= 0
}

// mineAll finds the groups of the whole history and settles them.
func (f *fullBuild) mineAll() {
	h := f.h
	// Rank tokens by how many tasks held them, rarest first; the index
	// keeps a set's tokens in this order.
	order := make([]int32, len(h.tokHash))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(h.tokCount[a], h.tokCount[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	f.rank = make([]int32, len(order))
	for r, t := range order {
		f.rank[t] = int32(r)
	}
	// From here on the sets hold ranks, ascending.
	inParallel(h.n, cpus(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			set := h.set(i)
			for k, t := range set {
				set[k] = f.rank[t]
			}
			slices.Sort(set)
		}
	})

	// Near-duplicates among the finished tasks.
	var pos []int32
	for i := 0; i < h.n; i++ {
		if h.status[i] != codeOpen && len(h.set(i)) >= 2 {
			pos = append(pos, int32(i))
		}
	}
	var progress func(done, total int)
	if f.o.Progress != nil {
		progress = func(done, total int) { f.o.Progress("comparing", done, total) }
	}
	uf := clusterRanked(func(k int) []int32 { return h.set(int(pos[k])) }, len(pos), f.o.Similarity, f.o.workers, progress)
	// Cluster ids are numbered in the order of their first tasks.
	h.cluster = make([]uint32, h.n)
	ids := make([]uint64, len(pos)) // by root
	count := make([]int32, len(pos))
	f.nextCluster = 1
	for k := range pos {
		r := uf.find(int32(k))
		if ids[r] == 0 {
			ids[r] = gidCluster<<60 | f.nextCluster
			f.nextCluster++
		}
		h.cluster[pos[k]] = uint32(ids[r] & gidMask)
		count[r]++
	}
	isGroup := map[uint64]bool{} // the clusters of two or more
	for k := range pos {
		if r := uf.find(int32(k)); count[r] >= 2 {
			isGroup[ids[r]] = true
		}
	}
	ids, count, uf = nil, nil, nil
	f.placeMembers(isGroup)

	// Settle the proposals and the title and similar groups big enough.
	var props, specific []*sgroup
	sgs := make([]*sgroup, len(f.gs)) // by place in gs: the settling's group, if any
	sgOf := func(gid uint64) *sgroup {
		if k, ok := f.groups[gid]; ok {
			return sgs[k]
		}
		return nil
	}
	gids := make([]uint64, 0, len(f.groups))
	for gid := range f.groups {
		gids = append(gids, gid)
	}
	slices.Sort(gids)
	for _, gid := range gids {
		kind, k := kindOfGID(gid), f.groups[gid]
		g := &f.gs[k]
		switch {
		case gidKind(gid) == gidTag:
			continue
		case kind == KindProposed:
		case int(g.n) < f.o.Threshold || g.done == 0:
			continue
		case kind == KindSimilar && g.n < 2:
			continue
		case !f.enoughChains(g, minChains(kind, f.o.Threshold)):
			continue
		}
		sgs[k] = &sgroup{gid: gid, kind: kind, key: f.key(g), size: int(g.n)}
		if kind == KindProposed {
			props = append(props, sgs[k])
		} else {
			specific = append(specific, sgs[k])
		}
	}
	type pair struct{ a, b *sgroup }
	// Title groups with clusters, counted on all CPUs; the few tasks that
	// hold a proposal after, rather than looked up for every task.
	counts := make([]map[pair]int, cpus())
	inParallel(h.n, len(counts), func(w, lo, hi int) {
		m := map[pair]int{}
		for i := lo; i < hi; i++ {
			if h.status[i] == codeOpen || h.title[i] == 0 {
				continue
			}
			if c := sgOf(h.clusterOf(i)); c != nil {
				if tg := sgOf(h.title[i]); tg != nil {
					m[pair{tg, c}]++
				}
			}
		}
		counts[w] = m
	})
	links := counts[0]
	for _, m := range counts[1:] {
		for p, n := range m {
			links[p] += n
		}
	}
	for i, p := range h.prop {
		if h.status[i] == codeOpen {
			continue
		}
		pg := sgOf(keyGID(gidProposal, proposalKey(p.Name)))
		if pg == nil {
			continue
		}
		if h.title[i] != 0 {
			if tg := sgOf(h.title[i]); tg != nil {
				links[pair{pg, tg}]++
			}
		}
		if c := sgOf(h.clusterOf(int(i))); c != nil {
			links[pair{pg, c}]++
		}
	}
	for p, n := range links {
		link(p.a, p.b, n)
	}
	kept := settle(props, specific)
	f.members = map[*output][]int32{}
	f.outOf = map[uint64]*output{}
	for _, k := range kept {
		o := &output{kind: k.kind, key: k.key, own: k.size}
		o.hash = outputHash(o.kind, o.key)
		var ms []int32
		for _, p := range k.parts {
			o.parts = append(o.parts, p.gid)
			f.outOf[p.gid] = o
			ms = append(ms, f.membersOf(f.group(p.gid))...)
		}
		slices.Sort(ms)
		f.members[o] = slices.Compact(ms)
		f.describe(o, f.group(k.gid))
		f.outputs = append(f.outputs, o)
	}
	// Settled: the settling's groups and links go.
	props, specific, kept, links, sgs = nil, nil, nil, nil, nil

	// Tag groups, largest first: one whose tasks are all in one kept group
	// says nothing more.
	var tags []*fgroup
	for _, gid := range gids {
		g := f.group(gid)
		if gidKind(gid) == gidTag && int(g.n) >= f.o.Threshold && g.done > 0 && f.enoughChains(g, minChains(KindTag, f.o.Threshold)) {
			tags = append(tags, g)
		}
	}
	sort.Slice(tags, func(i, j int) bool {
		return tagOrder(int(tags[i].n), f.key(tags[i]), int(tags[j].n), f.key(tags[j]))
	})
	for _, g := range tags {
		if f.tagContained(g) {
			continue
		}
		o := &output{kind: KindTag, key: f.key(g), own: int(g.n), parts: []uint64{g.gid}}
		o.hash = outputHash(o.kind, o.key)
		f.outOf[g.gid] = o
		// A copy: the texts need the outputs' members after the groups
		// are let go.
		f.members[o] = slices.Clone(f.membersOf(g))
		f.describe(o, g)
		f.outputs = append(f.outputs, o)
	}
	sort.SliceStable(f.outputs, func(i, j int) bool { return outputLess(f.outputs[i], f.outputs[j]) })
	inParallel(len(f.outputs), cpus(), func(_, lo, hi int) {
		for _, o := range f.outputs[lo:hi] {
			f.stats(o)
		}
	})
}

// placeMembers makes the groups of the finished tasks (title, tags,
// proposal, and cluster when isGroup holds it): it counts each group's
// members, then places them in one array, each group's after those of the
// groups before it.
func (f *fullBuild) placeMembers(isGroup map[uint64]bool) {
	h := f.h
	f.groups = map[uint64]int32{}
	var (
		at   = make([]int32, 0, 4*h.n) // each membership's group, task by task
		ends = make([]uint32, h.n)     // where each task's memberships end in at
	)
	add := func(gid uint64, i int32) {
		k, ok := f.groups[gid]
		if !ok {
			k = int32(len(f.gs))
			f.groups[gid] = k
			f.gs = append(f.gs, fgroup{gid: gid})
		}
		g := &f.gs[k]
		g.n++
		if h.status[i] == codeDone {
			g.done++
		}
		at = append(at, k)
	}
	for i := 0; i < h.n; i++ {
		if ii := int32(i); h.status[i] != codeOpen {
			if h.title[i] != 0 {
				add(h.title[i], ii)
			}
			for _, t := range h.tags(i) {
				add(t, ii)
			}
			if p, ok := h.prop[ii]; ok {
				key := proposalKey(p.Name)
				gid := keyGID(gidProposal, key)
				h.keys.put(gid, key)
				add(gid, ii)
				f.gs[at[len(at)-1]].latest = ii
			}
			if c := h.clusterOf(i); c != 0 && isGroup[c] {
				add(c, ii)
			}
		}
		ends[i] = uint32(len(at))
	}
	off := uint32(0)
	for k := range f.gs {
		f.gs[k].off, off = off, off+f.gs[k].n
		f.gs[k].n = 0
	}
	f.memberBuf = make([]int32, off)
	start := uint32(0)
	for i, end := range ends {
		for _, k := range at[start:end] {
			g := &f.gs[k]
			f.memberBuf[g.off+g.n] = int32(i)
			g.n++
		}
		start = end
	}
}

func (f *fullBuild) key(g *fgroup) string {
	if gidKind(g.gid) == gidCluster {
		return KindSimilar + ":" + f.h.id(int(f.memberBuf[g.off]))
	}
	return f.h.keys.get(g.gid)
}

// describe fills in what an output's text says besides its members.
func (f *fullBuild) describe(o *output, g *fgroup) {
	switch o.kind {
	case KindTitle:
		o.role = roleOfTitleKey(o.key)
	case KindTag:
		o.tag = strings.TrimPrefix(o.key, KindTag+":")
	case KindProposed:
		p := f.h.prop[g.latest]
		o.proposed, o.proposedDoc = p.Name, p.Description
	}
}

func (f *fullBuild) stats(o *output) {
	h := f.h
	ms := f.members[o]
	s := groupStats{roles: map[string]int{}}
	var fp, mfp uint64
	for _, i := range ms {
		s.n++
		switch h.status[i] {
		case codeDone:
			s.done++
		case codeFailed:
			s.failed++
		case codeBlocked:
			s.blocked++
		}
		s.roles[h.roleNames[h.role[i]]]++
		fp += memberHash(h.seq[i], h.finished[i])
		mfp += memberHash(h.seq[i], 0)
	}
	s.first, s.firstFinished = h.seq[ms[0]], h.finished[ms[0]]
	o.stats = s
	o.fp = fp + o.headerHash()
	o.mfp = mfp
}

// tagContained reports whether every task of tag group g is in one kept
// group: the one the first task's title, cluster or proposal settled in,
// or a tag kept before it.
func (f *fullBuild) tagContained(g *fgroup) bool {
	h := f.h
	members := f.membersOf(g)
	m0 := members[0]
	var cands []*output
	addCand := func(o *output) {
		if o != nil && !slices.Contains(cands, o) && len(f.members[o]) >= len(members) {
			cands = append(cands, o)
		}
	}
	propOf := func(i int32) uint64 {
		if p, ok := h.prop[i]; ok {
			return keyGID(gidProposal, proposalKey(p.Name))
		}
		return 0
	}
	// Gid 0 (no title, cluster or proposal) is no group's.
	addCand(f.outOf[h.title[m0]])
	addCand(f.outOf[h.clusterOf(int(m0))])
	addCand(f.outOf[propOf(m0)])
	for _, t := range h.tags(int(m0)) {
		if t != g.gid {
			addCand(f.outOf[t])
		}
	}
	for _, o := range cands {
		all := true
		for _, m := range members {
			var in bool
			if o.kind == KindTag {
				in = slices.Contains(h.tags(int(m)), o.parts[0])
			} else {
				in = f.outOf[h.title[m]] == o || f.outOf[h.clusterOf(int(m))] == o || f.outOf[propOf(m)] == o
			}
			if !in {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// runFull mines the whole history again and replaces the mining state.
func runFull(st *store.Store, o ScanOptions) (ScanResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := fullOnce(st, o)
		if errors.Is(err, errStateMoved) && attempt < 3 {
			continue // another scan wrote meanwhile: read again
		}
		return res, err
	}
}

var errStateMoved = errors.New("skill mining state changed during a full scan")

// contentBatch is how many new texts a full scan keeps before writing
// them: a large history's texts would not fit in memory at once.
const contentBatch = 512

// rebuildFor is how long a full scan keeps incremental scans waiting: it
// clears the mark when it is done, so this only matters for one that died.
const rebuildFor = 30 * time.Minute

func fullOnce(st *store.Store, o ScanOptions) (ScanResult, error) {
	// Incremental scans wait while this one reads the history (they would
	// move the state it is about to replace), and the trigger records every
	// change meanwhile: the tasks the snapshot holds as open may finish
	// before the new state is written.
	err := st.UpdateMine(func(tx *store.MineTx) error {
		if err := markRebuild(tx, o); err != nil {
			return err
		}
		return tx.Watch(math.MaxInt64)
	})
	if err != nil {
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}
	res, err := fullRead(st, o)
	var half stateWritten
	switch {
	case errors.As(err, &half):
		// The new state is written but its candidates are not: the next
		// scan must be a full one, which a mark already out of date asks.
		_ = st.UpdateMine(func(tx *store.MineTx) error {
			return tx.Put(metaKey(metaRebuild), binary.AppendVarint(nil, 0))
		})
	case err != nil && !errors.Is(err, errStateMoved):
		// Let incremental scans go on from the state as it was.
		_ = st.UpdateMine(func(tx *store.MineTx) error { return tx.Delete(metaKey(metaRebuild)) })
	}
	return res, err
}

// stateWritten is an error of a full scan after it wrote the new state.
type stateWritten struct{ err error }

func (e stateWritten) Error() string { return e.err.Error() }
func (e stateWritten) Unwrap() error { return e.err }

// fullRead is fullOnce once the incremental scans wait. It mines one
// snapshot of the history and writes the new state in one transaction,
// then distils the texts and reconciles the candidates, written in
// another. Between the two, the rebuild mark stays: incremental scans go
// on waiting, and if the scan dies there, the next one is a full scan.
// What only the state needs is let go before the texts are distilled: a
// long history's groups and records took most of the memory.
func fullRead(st *store.Store, o ScanOptions) (ScanResult, error) {
	var (
		f        *fullBuild
		maxSeq   int64
		lastCh   int64
		lastDec  int64
		gen      []byte
		finished int
		oldFP    = map[uint64]uint64{}
		oldCT    = map[uint64]content{} // the stored texts, without their bodies
		oldOut   = map[uint64]*output{}
	)
	err := st.ViewMine(func(v *store.MineView) error {
		all, ms, err := v.TaskCount()
		if err != nil {
			return err
		}
		maxSeq = ms
		if lastCh, err = v.LastChange(); err != nil {
			return err
		}
		if lastDec, err = v.LastDecision(); err != nil {
			return err
		}
		if gen, _, err = v.Get(metaKey(metaCursor)); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress("reading", 0, all)
		}
		h, err := readTasks(v, maxSeq, all, o.Progress)
		if err != nil {
			return err
		}
		finished = h.finishedCount()
		f = &fullBuild{o: o, h: h}
		f.mineAll()
		return nil
	})
	if err != nil {
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}
	var wrote []byte // the cursor this scan wrote
	err = st.UpdateMine(func(tx *store.MineTx) error {
		now, _, err := tx.Get(metaKey(metaCursor))
		if err != nil {
			return err
		}
		if string(now) != string(gen) {
			return errStateMoved
		}
		if err := f.write(tx, maxSeq, lastDec); err != nil {
			return err
		}
		if err := markRebuild(tx, o); err != nil {
			return err
		}
		if err := tx.DeleteChanges(lastCh); err != nil {
			return err
		}
		if wrote, _, err = tx.Get(metaKey(metaCursor)); err != nil {
			return err
		}
		return tx.Watch(maxSeq)
	})
	if err != nil {
		if errors.Is(err, errStateMoved) {
			return ScanResult{}, err
		}
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}

	var (
		changes []candidateChange
		results []ScanCandidate
		orphans map[string][]store.SourceRef
		bodies  map[uint64]string
	)
	err = st.ViewMine(func(v *store.MineView) error {
		// The settled groups as they were: the state's write left them
		// for writeOutputs to replace.
		err := v.Range([]byte{keyOutput}, []byte{keyOutput + 1}, false, func(k, val []byte) bool {
			if old, err := decodeOutput(beUint64(k[1:]), val); err == nil {
				oldOut[old.hash] = old
			}
			return true
		})
		if err != nil {
			return err
		}
		// The stored texts, in one pass rather than one by one when the
		// candidates are reconciled; the state's write kept those of the
		// groups that are still settled, and no other scan wrote since.
		err = v.Range([]byte{keyContent}, []byte{keyContent + 1}, false, func(k, val []byte) bool {
			hash := beUint64(k[1:])
			if fp, ct, err := decodeContentHead(val); err == nil {
				oldFP[hash], oldCT[hash] = fp, ct
			} else {
				oldFP[hash] = contentFP(val) // reported if it is read
			}
			return true
		})
		if err != nil {
			return err
		}
		texts, kept, err := f.contents(st, v, oldFP)
		if err != nil {
			return err
		}
		bodies = kept
		cs, err := newFullCandidates(v, f)
		if err != nil {
			return err
		}
		rgroups := make([]*rgroup, len(f.outputs))
		for i, out := range f.outputs {
			out := out
			rgroups[i] = &rgroup{
				out: out,
				ct: func() (content, error) {
					if ct, ok := texts[out.hash]; ok {
						return ct, nil
					}
					if ct, ok := oldCT[out.hash]; ok {
						return ct, nil
					}
					return storedContent(v, out.hash)
				},
				members: func() ([]int64, error) { return f.seqs(out), nil },
				same: func(id string) (bool, error) {
					if old := oldOut[out.hash]; old != nil && old.cand == id && old.mfp == out.mfp {
						return true, nil
					}
					refs, err := cs.sources(id)
					if err != nil {
						return false, err
					}
					ms := f.members[out]
					if len(refs) != len(ms) {
						return false, nil
					}
					for i, r := range refs {
						if r.Seq != f.h.seq[ms[i]] {
							return false, nil
						}
					}
					return true, nil
				},
			}
		}
		changes, results, err = reconcile(rgroups, cs, o, map[string]bool{})
		if err != nil {
			return err
		}
		orphans, err = cs.orphansAfter(changes)
		return err
	})
	if err != nil {
		return ScanResult{}, stateWritten{fmt.Errorf("skills scan: %w", err)}
	}
	at := o.Now()
	err = st.UpdateMine(func(tx *store.MineTx) error {
		now, _, err := tx.Get(metaKey(metaCursor))
		if err != nil {
			return err
		}
		if string(now) != string(wrote) {
			return errStateMoved
		}
		if err := f.writeOutputs(tx); err != nil {
			return err
		}
		if err := writeOrphans(tx, orphans); err != nil {
			return err
		}
		if err := writeCandidates(tx, changes, bodies, f.sourceRefs, at); err != nil {
			return err
		}
		return tx.Delete(metaKey(metaRebuild))
	})
	if err != nil {
		if errors.Is(err, errStateMoved) {
			return ScanResult{}, err
		}
		return ScanResult{}, stateWritten{fmt.Errorf("skills scan: %w", err)}
	}
	if o.Progress != nil {
		o.Progress("writing", 1, 1)
	}
	return ScanResult{Tasks: finished, Candidates: results}, nil
}

// markRebuild says a full scan is running, until rebuildFor from now:
// incremental scans wait for it.
func markRebuild(tx *store.MineTx, o ScanOptions) error {
	return tx.Put(metaKey(metaRebuild), binary.AppendVarint(nil, o.Now().Add(rebuildFor).Unix()))
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b[:8]) }

func (f *fullBuild) seqs(o *output) []int64 {
	ms := f.members[o]
	seqs := make([]int64, len(ms))
	for k, m := range ms {
		seqs[k] = f.h.seq[m]
	}
	return seqs
}

func (f *fullBuild) sourceRefs(o *output) ([]store.SourceRef, error) {
	ms := f.members[o]
	refs := make([]store.SourceRef, len(ms))
	for i, m := range ms {
		refs[i] = store.SourceRef{Seq: f.h.seq[m], ID: f.h.id(int(m))}
	}
	return refs, nil
}

// storedContent reads the stored text of a settled group, all but its
// body.
func storedContent(r kvReader, hash uint64) (content, error) {
	val, ok, err := r.Get(key1(keyContent, hash))
	if err != nil {
		return content{}, err
	}
	if !ok {
		return content{}, fmt.Errorf("settled group %x: %w", hash, errCorrupt)
	}
	_, ct, err := decodeContent(val)
	ct.body = ""
	return ct, err
}

// contents distills the text of every output whose inputs changed and
// writes it, the others keeping their stored text. The samples are read
// while the texts read before them are distilled on the other CPUs, and
// the texts are written as they come, a batch at a time (a large
// history's would not fit in memory at once). It returns the texts
// without their bodies, and the bodies up to keptBodies bytes in all, for
// the candidates.
func (f *fullBuild) contents(st *store.Store, v *store.MineView, oldFP map[uint64]uint64) (map[uint64]content, map[uint64]string, error) {
	texts, bodies := map[uint64]content{}, map[uint64]string{}
	type job struct {
		o  *output
		in *distillInput
		ct content
	}
	workers := cpus()
	jobs := make(chan *job, 2*workers)
	distilled := make(chan *job, 2*workers)
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.ct = distill(j.in)
				j.in = nil
				distilled <- j
			}
		}()
	}
	// The writer owns texts and bodies until it is done.
	written := make(chan error, 1)
	go func() {
		var (
			batch []*job
			err   error
			kept  int
		)
		flush := func() {
			if err == nil && len(batch) > 0 {
				err = st.UpdateMine(func(tx *store.MineTx) error {
					for _, j := range batch {
						if err := tx.Put(key1(keyContent, j.o.hash), encodeContent(j.o.fp, j.ct)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					failed.Store(true)
				}
			}
			for _, j := range batch {
				if kept+len(j.ct.body) <= keptBodies {
					bodies[j.o.hash] = j.ct.body
					kept += len(j.ct.body)
				}
				j.ct.body = ""
				texts[j.o.hash] = j.ct
			}
			batch = batch[:0]
		}
		for j := range distilled {
			batch = append(batch, j)
			if len(batch) == contentBatch {
				flush()
			}
		}
		flush()
		written <- err
	}()
	var err error
	for i, o := range f.outputs {
		if f.o.Progress != nil && i%64 == 0 {
			f.o.Progress("writing", i, len(f.outputs))
		}
		if fp, ok := oldFP[o.hash]; ok && fp == o.fp {
			continue
		}
		if failed.Load() {
			break
		}
		var in *distillInput
		if in, err = f.distillInput(v, o); err != nil {
			break
		}
		jobs <- &job{o: o, in: in}
	}
	close(jobs)
	wg.Wait()
	close(distilled)
	if werr := <-written; err == nil {
		err = werr
	}
	if err != nil {
		return nil, nil, err
	}
	return texts, bodies, nil
}

// keptBodies bounds the distilled bodies a full scan keeps for the
// candidates it writes; the others are read back.
const keptBodies = 32 << 20

func (f *fullBuild) distillInput(v *store.MineView, o *output) (*distillInput, error) {
	ms := f.members[o]
	if len(ms) > sampleSize {
		ms = ms[len(ms)-sampleSize:]
	}
	seqs := make([]int64, len(ms))
	for i, m := range ms {
		seqs[i] = f.h.seq[m]
	}
	ts, err := v.SampleTasks(seqs)
	if err != nil {
		return nil, err
	}
	in := &distillInput{kind: o.kind, key: o.key, role: o.role, tag: o.tag, proposed: o.proposed,
		proposedDoc: o.proposedDoc, stats: o.stats}
	for i, t := range ts {
		in.tasks = append(in.tasks, newSTask(t, f.orders(int(ms[i]))))
	}
	return in, nil
}

// orders is a task's set as token orders, ascending.
func (f *fullBuild) orders(i int) []uint64 { return f.appendOrders(nil, i) }

// appendOrders appends task i's set, as token orders, to dst.
func (f *fullBuild) appendOrders(dst []uint64, i int) []uint64 {
	for _, r := range f.h.set(i) {
		dst = append(dst, orderBase+uint64(r))
	}
	return dst
}
