package skills

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/shogun-dev/shogun/store"
)

// ErrRebuilding means a full scan (shogun skills scan --full) is running:
// an incremental scan waits for it, the tasks it would have read stay
// listed for the next one.
var ErrRebuilding = errors.New("skills: a full scan is running; the next scan takes in what changed meanwhile")

// errNeedFull says the incremental scan cannot go on from the stored state
// (none yet, another version, other options, or too much new work to do
// task by task): a full scan takes over.
var errNeedFull = errors.New("skills: a full scan is needed")

// miner is one incremental scan: it reads the tasks that arrived or
// changed since the last scan and updates only what they touch, in one
// write transaction.
type miner struct {
	o   ScanOptions
	tx  *store.MineTx
	kv  *kv
	s   *state
	cur cursor
	// finished counts the finished tasks mined; orders is the next order
	// for a token first seen.
	finished int64
	orders   uint64
	clusters uint64 // next cluster id
	maxSeq   int64
	lastCh   int64

	// The tasks this scan moves: their records before (nil if new) and
	// after, by seq.
	before map[int64]*record
	after  map[int64]*record
	// moved are tasks whose cluster changed because their cluster merged
	// or split: their cluster before and after.
	moved map[int64][2]uint64
	// dirty groups: created, grown, shrunk, merged, split or gone.
	dirty map[uint64]bool
	// outBefore is the settled group each group was in before this scan.
	outBefore map[uint64]uint64
	// resolved clusters, within this scan.
	roots map[uint64]uint64
	// oldRoot is the cluster each moving task was in before the scan.
	oldRoot map[int64]uint64
	// keyOf gives the keys of the title and tag groups of the tasks read.
	keyOf map[uint64]string
	// sizeBefore is the size of each changed group before the scan.
	sizeBefore map[uint64]int
	// relinked are clusters whose links changed wholesale (merged with
	// another of two or more, or split).
	relinked map[uint64]bool
	// made are the settled groups this scan made; reout the tasks of
	// groups that settled elsewhere.
	made  map[uint64]*output
	reout map[int64]bool
	// chains remembers, once the groups are final, whether a group's
	// tasks come from enough chains of commands (enoughChains).
	chains map[uint64]bool
}

// Thresholds above which an incremental scan hands over to a full one: a
// backlog this large is mined faster all at once.
const (
	incrementalMax   = 20000
	incrementalShare = 4 // or a quarter of the history
)

func runIncremental(st *store.Store, o ScanOptions) (ScanResult, error) {
	var res ScanResult
	err := st.UpdateMine(func(tx *store.MineTx) error {
		m := &miner{o: o, tx: tx, kv: newKV(tx)}
		m.s = newState(m.kv)
		var err error
		res, err = m.run()
		return err
	})
	if errors.Is(err, errNeedFull) || errors.Is(err, errCorrupt) {
		// A damaged state is rebuilt, not reported: the history is intact.
		return runFull(st, o)
	}
	if err != nil {
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}
	return res, nil
}

func (m *miner) metaU(name string) (uint64, bool, error) {
	v, err := m.kv.get(metaKey(name))
	if err != nil || v == nil {
		return 0, false, err
	}
	x, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, false, errCorrupt
	}
	return x, true, nil
}

func (m *miner) loadMeta() error {
	if v, err := m.kv.get(metaKey(metaRebuild)); err != nil {
		return err
	} else if v != nil {
		until, n := binary.Varint(v)
		if n > 0 && m.o.Now().Unix() < until {
			return ErrRebuilding
		}
		// A full scan that died: start one again.
		return errNeedFull
	}
	if f, ok, err := m.metaU(metaFormat); err != nil {
		return err
	} else if !ok || f != formatVersion {
		return errNeedFull
	}
	opts, err := m.kv.get(metaKey(metaOptions))
	if err != nil {
		return err
	}
	if string(opts) != string(encodeOptions(m.o)) {
		return errNeedFull
	}
	cv, err := m.kv.get(metaKey(metaCursor))
	if err != nil {
		return err
	}
	if m.cur, err = decodeCursor(cv); err != nil {
		return errNeedFull
	}
	var ok bool
	if v, ok2, err := m.metaU(metaTasks); err != nil || !ok2 {
		return errors.Join(err, errNeedFull)
	} else {
		m.finished = int64(v)
	}
	if m.orders, ok, err = m.metaU(metaOrders); err != nil || !ok {
		return errors.Join(err, errNeedFull)
	}
	if m.clusters, ok, err = m.metaU(metaClusters); err != nil || !ok {
		return errors.Join(err, errNeedFull)
	}
	return nil
}

func (m *miner) run() (ScanResult, error) {
	if err := m.loadMeta(); err != nil {
		return ScanResult{}, err
	}
	maxSeq, err := m.tx.MaxSeq()
	if err != nil {
		return ScanResult{}, err
	}
	if maxSeq < m.cur.seq {
		return ScanResult{}, errNeedFull // not the history the state was mined from
	}
	m.maxSeq = maxSeq
	changed, lastCh, err := m.tx.Changes()
	if err != nil {
		return ScanResult{}, err
	}
	m.lastCh = lastCh
	if n := int64(len(changed)) + maxSeq - m.cur.seq; n > max(incrementalMax, m.cur.count/incrementalShare) {
		return ScanResult{}, errNeedFull
	}
	m.before, m.after = map[int64]*record{}, map[int64]*record{}
	m.moved, m.dirty, m.outBefore, m.roots = map[int64][2]uint64{}, map[uint64]bool{}, map[uint64]uint64{}, map[uint64]uint64{}
	m.keyOf = map[uint64]string{}
	m.sizeBefore, m.relinked = map[uint64]int{}, map[uint64]bool{}
	m.made, m.reout = map[uint64]*output{}, map[int64]bool{}
	m.chains = map[uint64]bool{}

	if err := m.readChanged(changed); err != nil {
		return ScanResult{}, err
	}
	if err := m.readNew(); err != nil {
		return ScanResult{}, err
	}
	if err := m.regroup(); err != nil {
		return ScanResult{}, err
	}
	res, err := m.settleAndWrite()
	if err != nil {
		return ScanResult{}, err
	}

	return res, nil
}

// readChanged reads the tasks whose status changed since they were mined.
func (m *miner) readChanged(seqs []int64) error {
	var known []int64
	for _, q := range seqs {
		if q <= m.cur.seq {
			known = append(known, q)
		}
	}
	if len(known) == 0 {
		return nil
	}
	if err := m.s.prefetchRecords(known); err != nil {
		return err
	}
	rows, err := m.tx.TaskStatuses(known)
	if err != nil {
		return err
	}
	var fin []int64
	for _, q := range known {
		if statusCode(rows[q].Status) != codeOpen {
			fin = append(fin, q)
		}
	}
	props, err := m.tx.Proposals(fin)
	if err != nil {
		return err
	}
	for _, q := range known {
		r, err := m.s.record(q)
		if err != nil {
			return err
		}
		if r == nil {
			return errNeedFull
		}
		old := *r
		nr := *r
		row := rows[q]
		if norm := normTitle(string(row.Title)); norm != "" {
			m.keyOf[keyGID(gidTitle, titleKey(row.Role, norm))] = titleKey(row.Role, norm)
		}
		tags, err := decodeTags(string(row.Tags))
		if err != nil {
			return fmt.Errorf("task %s: tags: %w", row.ID, err)
		}
		for _, tag := range foldTags(tags) {
			m.keyOf[keyGID(gidTag, tagKey(tag))] = tagKey(tag)
		}
		nr.status, nr.finished = statusCode(row.Status), unixNano(row.FinishedAt)
		nr.prop, nr.propName, nr.propDoc = 0, "", ""
		if p, ok := props[q]; ok && nr.status != codeOpen {
			nr.prop, nr.propName, nr.propDoc = keyGID(gidProposal, proposalKey(p.Name)), p.Name, p.Description
		}
		if nr.status == old.status && nr.finished == old.finished && nr.prop == old.prop &&
			nr.propName == old.propName && nr.propDoc == old.propDoc {
			continue
		}
		m.before[q], m.after[q] = &old, &nr
	}
	return nil
}

// readNew reads the tasks that arrived since the last scan: their tokens,
// counted in arrival order, make their sets.
func (m *miner) readNew() error {
	type newTask struct {
		r    *record
		toks []uint64
	}
	var (
		news []newTask
		buf  []byte
		seen tokenSet
	)
	err := m.tx.EachTask(m.cur.seq, m.maxSeq, func(t *store.MineTask) error {
		r := &record{seq: t.Seq, id: t.ID, role: t.Role, status: statusCode(t.Status), finished: unixNano(t.FinishedAt), root: rootHash(t.Root)}
		var toks []uint64
		toks, buf = rawTokens(t.Title, t.Body, &seen, nil, buf)
		if norm := normTitle(string(t.Title)); norm != "" {
			r.title = keyGID(gidTitle, titleKey(r.role, norm))
			m.keyOf[r.title] = titleKey(r.role, norm)
		}
		tags, err := decodeTags(string(t.Tags))
		if err != nil {
			return fmt.Errorf("task %s: tags: %w", t.ID, err)
		}
		for _, tag := range foldTags(tags) {
			g := keyGID(gidTag, tagKey(tag))
			m.keyOf[g] = tagKey(tag)
			r.tags = append(r.tags, g)
		}
		news = append(news, newTask{r, toks})
		return nil
	})
	if err != nil || len(news) == 0 {
		return err
	}
	var fin []int64
	var keys [][]byte
	for _, n := range news {
		if n.r.status != codeOpen {
			fin = append(fin, n.r.seq)
		}
		for _, t := range n.toks {
			keys = append(keys, tokenPageKey(t))
		}
	}
	props, err := m.tx.Proposals(fin)
	if err != nil {
		return err
	}
	if err := m.kv.prefetch(keys); err != nil {
		return err
	}
	for _, n := range news {
		k := m.cur.count
		limit := commonLimit(k)
		for _, h := range n.toks {
			t, ok, err := m.s.token(h)
			if err != nil {
				return err
			}
			if !ok {
				t.order = m.orders
				m.orders--
			}
			if int64(t.count) <= limit {
				n.r.set = append(n.r.set, t.order)
			}
			t.count++
			m.s.putToken(h, t)
		}
		slices.Sort(n.r.set)
		if p, ok := props[n.r.seq]; ok && n.r.status != codeOpen {
			n.r.prop, n.r.propName, n.r.propDoc = keyGID(gidProposal, proposalKey(p.Name)), p.Name, p.Description
		}
		m.cur.count++
		m.after[n.r.seq] = n.r
	}
	return nil
}
