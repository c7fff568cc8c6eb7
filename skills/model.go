package skills

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/shogun-dev/shogun/store"
)

// Task status codes in records.
const (
	codeOpen    = 0 // not finished: queued, in flight or cancelled
	codeDone    = 1
	codeFailed  = 2
	codeBlocked = 3
)

func statusCode(s string) uint8 {
	switch s {
	case store.StatusDone:
		return codeDone
	case store.StatusFailed:
		return codeFailed
	case store.StatusBlocked:
		return codeBlocked
	}
	return codeOpen
}

func codeStatus(c uint8) string {
	return [...]string{"", store.StatusDone, store.StatusFailed, store.StatusBlocked}[c]
}

// record is what mining keeps of every task it has read, finished or not:
// enough to put it in its groups, and to take it out again.
type record struct {
	seq      int64
	id, role string
	status   uint8    // a code*
	finished int64    // unix nanoseconds, 0 if not set
	title    uint64   // title group, 0 when the title has no meaningful word
	tags     []uint64 // tag groups, without repeats
	set      []uint64 // token orders of title and body, ascending, common ones left out
	// prop is the proposal group of the skill its last report proposed
	// (finished tasks only), with the name and description as written.
	prop              uint64
	propName, propDoc string
	// cluster is the cluster it is in (finished, with a set of two tokens
	// or more), as an id that may since have been merged (resolve).
	cluster uint64
	// root is the rootHash of the first task of its chain of commands
	// when that is another task, 0 when it is the first: the tasks of one
	// chain are one piece of work (chainKey).
	root uint64
}

// rootHash stands for the task id of a chain's first task; "" (the task
// itself) is 0.
func rootHash(root string) uint64 {
	if root == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(root))
	return h.Sum64()
}

// chainKey stands for the chain of commands a task belongs to, given its
// id and the rootHash of its chain's first task: the tasks an order caused
// (a karo's parts of it, their own subtasks) and the order itself have
// the same key. A group counts the chains among its tasks, not the tasks,
// against the threshold (enoughChains).
func chainKey(id string, root uint64) uint64 {
	if root != 0 {
		return root
	}
	return rootHash(id)
}

func (r *record) chain() uint64 { return chainKey(r.id, r.root) }

// chainCounter tells whether a group's tasks come from at least n chains,
// reading as few of them as it needs: most groups show n chains in their
// first n tasks.
type chainCounter struct {
	n    int
	seen []uint64
}

// add counts a task's chain and says whether n chains are reached.
func (c *chainCounter) add(key uint64) bool {
	if !slices.Contains(c.seen, key) {
		c.seen = append(c.seen, key)
	}
	return len(c.seen) >= c.n
}

func (r *record) finishedOK() bool { return r.status != codeOpen }

// recordShift: records are kept 256 seqs to a chunk.
const recordShift = 8

func appendRecord(b []byte, base int64, r *record) []byte {
	e := enc{b}
	e.u(uint64(r.seq - base))
	e.s(r.id)
	e.s(r.role)
	e.u(uint64(r.status))
	e.i(r.finished)
	e.u(r.title)
	e.u(uint64(len(r.tags)))
	for _, t := range r.tags {
		e.u(t)
	}
	e.u(uint64(len(r.set)))
	prev := uint64(0)
	for _, t := range r.set {
		e.u(t - prev)
		prev = t
	}
	e.u(r.prop)
	if r.prop != 0 {
		e.s(r.propName)
		e.s(r.propDoc)
	}
	e.u(r.cluster)
	e.u(r.root)
	return e.b
}

func decodeRecords(base int64, b []byte) ([]*record, error) {
	return decodeRecordsOf(base, b, -1)
}

// decodeRecordsOf decodes the records of a chunk; if only is a seq (not
// negative), it decodes that one record and reads past the others without
// allocating: a near-duplicate check reads single records spread over the
// whole history.
func decodeRecordsOf(base int64, b []byte, only int64) ([]*record, error) {
	d := dec{b: b}
	var out []*record
	var skipped record
	// count reads a length, refusing one that the bytes left cannot hold
	// (each entry takes at least a byte).
	count := func() uint64 {
		n := d.u()
		if n > uint64(len(d.b)) {
			d.err = errCorrupt
			return 0
		}
		return n
	}
	for d.more() {
		seq := base + int64(d.u())
		d.skip = only >= 0 && seq != only
		r := &skipped
		if !d.skip {
			r = &record{}
		}
		r.seq = seq
		r.id = d.s()
		r.role = d.s()
		r.status = uint8(d.u())
		r.finished = d.i()
		r.title = d.u()
		if n := count(); n > 0 {
			if !d.skip {
				r.tags = make([]uint64, n)
			}
			for i := range n {
				if t := d.u(); !d.skip {
					r.tags[i] = t
				}
			}
		}
		if n := count(); n > 0 {
			if !d.skip {
				r.set = make([]uint64, n)
			}
			prev := uint64(0)
			for i := range n {
				if prev += d.u(); !d.skip {
					r.set[i] = prev
				}
			}
		}
		r.prop = d.u()
		if r.prop != 0 {
			r.propName = d.s()
			r.propDoc = d.s()
		}
		r.cluster = d.u()
		r.root = d.u()
		if d.skip {
			continue
		}
		out = append(out, r)
		if only >= 0 {
			break
		}
	}
	return out, d.check("task records")
}

// Group ids: the kind in the top four bits; for titles, tags and proposals
// a hash of the key below, for a cluster a number given when it formed (a
// cluster of one needs no row).
const (
	gidTitle    = 1
	gidTag      = 2
	gidProposal = 3
	gidCluster  = 4
	gidMask     = 1<<60 - 1
)

func gidKind(g uint64) int { return int(g >> 60) }

func keyGID(kind int, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return uint64(kind)<<60 | h.Sum64()&gidMask
}

// kindOfGID is the Kind* a group of that id settles as.
func kindOfGID(g uint64) string {
	switch gidKind(g) {
	case gidTitle:
		return KindTitle
	case gidTag:
		return KindTag
	case gidProposal:
		return KindProposed
	}
	return KindSimilar
}

// titleKey is the key of a title group: the role and the normalised title.
func titleKey(role, norm string) string { return KindTitle + ":" + role + ":" + norm }

func tagKey(tag string) string { return KindTag + ":" + tag }

// proposalKey is the key of a proposal group: the slug of the name.
func proposalKey(name string) string {
	name = strings.TrimSpace(name)
	slug := Slug(name)
	if slug == "" {
		slug = "skill-" + shortHash(name)
	}
	return KindProposed + ":" + slug
}

// foldTags folds a task's tags as tag groups compare them: case folded,
// trimmed, blank ones and repeats dropped.
func foldTags(tags []string) []string {
	var out []string
	for _, tag := range tags {
		tag = strings.ToLower(strings.TrimSpace(tag))
		if tag != "" && !slices.Contains(out, tag) {
			out = append(out, tag)
		}
	}
	return out
}

// group is a stored group: its members' count and what settling needs.
type group struct {
	gid        uint64
	key        string // kind:key; "" for a cluster
	size, done int
	first      int64 // seq of the first member (arrival order)
	// into is the cluster a merged cluster went into; 0 for a live one.
	into uint64
	// latest is the proposal's latest member, whose name and description
	// the candidate takes.
	latest    int64
	name, doc string
	// out is the settled group it belongs to (a hash of its key), 0 when
	// it is in none.
	out uint64
	// links are the groups it shares finished tasks with (title groups
	// with clusters of two or more, proposals with both), and how many.
	links map[uint64]int
	// inline holds the members of a group of up to inlineMembers; a
	// larger group keeps them in chunks (keyList).
	inline []int64
	// maxLinked is, for a cluster, at least the size of the largest title
	// group it shares tasks with: when it is smaller than the cluster, no
	// title group settles before it.
	maxLinked int
}

// inlineMembers is the most members a group keeps in its own entry.
const inlineMembers = 64

func appendGroup(b []byte, g *group) []byte {
	e := enc{b}
	e.s(g.key)
	e.u(uint64(g.size))
	e.u(uint64(g.done))
	e.u(uint64(g.first))
	e.u(g.into)
	e.u(uint64(g.latest))
	e.s(g.name)
	e.s(g.doc)
	e.u(g.out)
	e.u(uint64(len(g.links)))
	for _, l := range slices.Sorted(maps.Keys(g.links)) {
		e.u(l)
		e.u(uint64(g.links[l]))
	}
	e.u(uint64(len(g.inline)))
	prev := int64(0)
	for _, q := range g.inline {
		e.u(uint64(q - prev))
		prev = q
	}
	e.u(uint64(g.maxLinked))
	return e.b
}

func decodeGroup(gid uint64, b []byte) (*group, error) {
	d := dec{b: b}
	g := &group{gid: gid}
	g.key = d.s()
	g.size = int(d.u())
	g.done = int(d.u())
	g.first = int64(d.u())
	g.into = d.u()
	g.latest = int64(d.u())
	g.name = d.s()
	g.doc = d.s()
	g.out = d.u()
	if n := d.u(); n > 0 && d.err == nil {
		g.links = make(map[uint64]int, n)
		for ; n > 0; n-- {
			l := d.u()
			g.links[l] = int(d.u())
		}
	}
	if n := d.u(); n > 0 && d.err == nil {
		g.inline = make([]int64, n)
		prev := int64(0)
		for i := range g.inline {
			prev += int64(d.u())
			g.inline[i] = prev
		}
	}
	g.maxLinked = int(d.u())
	return g, d.check("group")
}

// Groups are kept in pages (keyGroup, then the page), many to a row: a
// large history has hundreds of thousands of title groups, most of one
// or two tasks. The page is the kind and twelve bits of a hash of the id.
func groupPage(gid uint64) uint16 {
	return uint16(gid>>60)<<12 | uint16(mix64(gid)>>52)
}

func groupPageKey(page uint16) []byte { return []byte{keyGroup, byte(page >> 8), byte(page)} }

// Tokens are kept in 256 pages, by the top byte of their hash.
func tokenPageKey(h uint64) []byte { return []byte{keyToken, byte(h >> 56)} }

// A page is its entries by id, ascending: the id (8 bytes), the length of
// the value, the value. encodePage appends one to b.
func encodePage[V any](b []byte, ids []uint64, val func(b []byte, id uint64) []byte) []byte {
	var v []byte
	for _, id := range ids {
		v = val(v[:0], id)
		b = binary.BigEndian.AppendUint64(b, id)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

func decodePage(b []byte, fn func(id uint64, v []byte) error) error {
	for len(b) > 0 {
		if len(b) < 9 {
			return errCorrupt
		}
		id := binary.BigEndian.Uint64(b)
		n, k := binary.Uvarint(b[8:])
		if k <= 0 || uint64(len(b)-8-k) < n {
			return errCorrupt
		}
		v := b[8+k : 8+k+int(n)]
		if err := fn(id, v); err != nil {
			return err
		}
		b = b[8+k+int(n):]
	}
	return nil
}

// token is a token's order in the index and how many tasks held it.
type token struct{ order, count uint64 }

func appendToken(b []byte, t token) []byte {
	e := enc{b}
	e.u(t.order)
	e.u(t.count)
	return e.b
}

// A member list or a posting list is kept in chunks of up to listChunk
// entries, keyed by the list and the seq of the chunk's first entry.
const listChunk = 256

// posting is an entry of the similarity index: a finished task, the
// number of tokens in its set, its cluster when it was indexed, and a
// sketch of its set.
type posting struct {
	seq     int64
	n       int
	cluster uint64
	sketch  sketch
}

// sketch counts a set's tokens in 32 bins (4 bits each, 15 meaning 15 or
// more): two sets share at most, in each bin, the smaller count, so most
// sets that are not alike are told apart without reading them.
type sketch [16]byte

func sketchOf(set []uint64) sketch {
	var s sketch
	for _, o := range set {
		b := mix64(o) & 31
		v := s[b/2] >> (4 * (b % 2)) & 15
		if v < 15 {
			s[b/2] += 1 << (4 * (b % 2))
		}
	}
	return s
}

// mayShare reports whether two sets with these sketches can share need
// tokens. It sums the smaller count of each bin eight bins at a time, in
// the bytes of a word: it is asked for most pairs a similarity join
// finds.
func (a sketch) mayShare(b sketch, need int) bool {
	const (
		low  = 0x0f0f0f0f0f0f0f0f // a bin in each byte
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	bound := 0
	for half := 0; half < len(a); half += 8 {
		x, y := binary.LittleEndian.Uint64(a[half:]), binary.LittleEndian.Uint64(b[half:])
		for sh := 0; sh < 8; sh += 4 {
			xs, ys := x>>sh&low, y>>sh&low
			// A bin full (15) in both gives no bound; full in one, the
			// other's count, which is the smaller anyway.
			if ((xs&ys)+ones)&(ones<<4) != 0 {
				return true
			}
			ge := (((xs | high) - ys) & high >> 7) * 0xff // 0xff in the bytes where xs >= ys
			bound += int((ys&ge | xs&^ge) * ones >> 56)
		}
	}
	return bound >= need
}

func encodeSeqs(seqs []int64) []byte {
	e := enc{}
	prev := seqs[0]
	for _, s := range seqs {
		e.u(uint64(s - prev))
		prev = s
	}
	return e.b
}

func decodeSeqs(start int64, b []byte) ([]int64, error) {
	d := dec{b: b}
	var out []int64
	prev := start
	for d.more() {
		prev += int64(d.u())
		out = append(out, prev)
	}
	return out, d.check("member list")
}

func encodePostings(ps []posting) []byte {
	var b []byte
	prev := ps[0].seq
	for _, p := range ps {
		b = appendPosting(b, prev, p)
		prev = p.seq
	}
	return b
}

// appendPosting appends p to a chunk of the similarity index whose
// previous posting has seq prev (the chunk's first seq for its first).
func appendPosting(b []byte, prev int64, p posting) []byte {
	e := enc{b}
	e.u(uint64(p.seq - prev))
	e.u(uint64(p.n))
	e.u(p.cluster & gidMask)
	e.b = append(e.b, p.sketch[:]...)
	return e.b
}

func decodePostings(start int64, b []byte) ([]posting, error) {
	var out []posting
	err := eachPosting(start, b, func(p posting) bool {
		out = append(out, p)
		return true
	})
	return out, err
}

// eachPosting calls fn with the postings of a chunk of the similarity
// index, in order, until fn returns false; it allocates nothing, for the
// long lists of frequent tokens.
func eachPosting(start int64, b []byte, fn func(posting) bool) error {
	d := dec{b: b}
	prev := start
	for d.more() {
		prev += int64(d.u())
		p := posting{seq: prev, n: int(d.u())}
		p.cluster = gidCluster<<60 | d.u()
		if d.err != nil || len(d.b) < len(p.sketch) {
			return fmt.Errorf("similarity index: %w", errCorrupt)
		}
		copy(p.sketch[:], d.b)
		d.b = d.b[len(p.sketch):]
		if !fn(p) {
			return nil
		}
	}
	return d.check("similarity index")
}

// output is a settled group: a group of the kinds mine finds, with the
// groups it took in, standing for one candidate. Its members are the
// candidate's sources.
type output struct {
	hash  uint64
	kind  string
	key   string
	own   int      // the settling group's own size, which orders it
	parts []uint64 // the settling group first, then those it took in
	// role (title), tag (tag), and proposed name and description
	// (proposal), for the text.
	role, tag, proposed, proposedDoc string
	stats                            groupStats
	fp                               uint64 // fingerprint of the text's inputs: members, their finish times, the header
	mfp                              uint64 // fingerprint of the members alone
	cand                             string // the candidate standing for it
}

// groupStats are what a text says of all of a group's members (the
// sample says the rest).
type groupStats struct {
	n                     int
	done, failed, blocked int
	roles                 map[string]int
	first                 int64 // seq of the first member
	firstFinished         int64 // its finish time, unix nanoseconds
}

func (s *groupStats) add(r *record, sign int) {
	s.n += sign
	switch r.status {
	case codeDone:
		s.done += sign
	case codeFailed:
		s.failed += sign
	case codeBlocked:
		s.blocked += sign
	}
	if s.roles == nil {
		s.roles = map[string]int{}
	}
	s.roles[r.role] += sign
	if s.roles[r.role] <= 0 {
		delete(s.roles, r.role)
	}
	if sign > 0 && (s.first == 0 || r.seq < s.first) {
		s.first, s.firstFinished = r.seq, r.finished
	}
}

// memberHash is a member's share of a group's fingerprint: its seq and
// finish time (a task finished again has another report).
func memberHash(seq, finished int64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(seq))
	binary.LittleEndian.PutUint64(b[8:], uint64(finished))
	h := fnv.New64a()
	h.Write(b[:])
	return mix64(h.Sum64())
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// headerHash is the fingerprint's share of what a group's text says
// besides its members.
func (o *output) headerHash() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", textVersion, o.kind, o.key, o.role, o.tag, o.proposed, o.proposedDoc)
	return mix64(h.Sum64())
}

func outputHash(kind, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64() | 1 // never 0, which means "in no group"
}

func encodeOutput(o *output) []byte {
	e := enc{}
	e.s(o.kind)
	e.s(o.key)
	e.u(uint64(o.own))
	e.u(uint64(len(o.parts)))
	for _, p := range o.parts {
		e.u(p)
	}
	e.s(o.role)
	e.s(o.tag)
	e.s(o.proposed)
	e.s(o.proposedDoc)
	s := &o.stats
	e.u(uint64(s.n))
	e.u(uint64(s.done))
	e.u(uint64(s.failed))
	e.u(uint64(s.blocked))
	roles := make([]string, 0, len(s.roles))
	for r := range s.roles {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	e.u(uint64(len(roles)))
	for _, r := range roles {
		e.s(r)
		e.u(uint64(s.roles[r]))
	}
	e.u(uint64(s.first))
	e.i(s.firstFinished)
	e.u(o.fp)
	e.u(o.mfp)
	e.s(o.cand)
	return e.b
}

func decodeOutput(hash uint64, b []byte) (*output, error) {
	d := dec{b: b}
	o := &output{hash: hash}
	o.kind = d.s()
	o.key = d.s()
	o.own = int(d.u())
	if n := d.u(); d.err == nil {
		o.parts = make([]uint64, n)
		for i := range o.parts {
			o.parts[i] = d.u()
		}
	}
	o.role = d.s()
	o.tag = d.s()
	o.proposed = d.s()
	o.proposedDoc = d.s()
	s := &o.stats
	s.n = int(d.u())
	s.done = int(d.u())
	s.failed = int(d.u())
	s.blocked = int(d.u())
	s.roles = map[string]int{}
	for n := d.u(); n > 0 && d.err == nil; n-- {
		r := d.s()
		s.roles[r] = int(d.u())
	}
	s.first = int64(d.u())
	s.firstFinished = d.i()
	o.fp = d.u()
	o.mfp = d.u()
	o.cand = d.s()
	return o, d.check("settled group")
}

// content is what a group gives its candidate.
type content struct {
	name        string // wanted name, before it is made unique
	heading     string
	description string
	body        string // may be left out, with bodyHash standing for it
	bodyHash    uint64
}

func encodeContent(fp uint64, c content) []byte {
	e := enc{}
	e.u(fp)
	e.s(c.name)
	e.s(c.heading)
	e.s(c.description)
	e.u(c.bodyHash)
	e.s(c.body)
	return e.b
}

func decodeContent(b []byte) (uint64, content, error) {
	d := dec{b: b}
	fp := d.u()
	c := content{name: d.s(), heading: d.s(), description: d.s(), bodyHash: d.u(), body: d.s()}
	return fp, c, d.check("distilled text")
}

// decodeContentHead is decodeContent without the body, which it checks
// but does not copy.
func decodeContentHead(b []byte) (uint64, content, error) {
	d := dec{b: b}
	fp := d.u()
	c := content{name: d.s(), heading: d.s(), description: d.s(), bodyHash: d.u()}
	d.skip = true
	d.s()
	return fp, c, d.check("distilled text")
}

// contentFP reads only the fingerprint of a stored text.
func contentFP(b []byte) uint64 {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0
	}
	return v
}
