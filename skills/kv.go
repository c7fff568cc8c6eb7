package skills

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/shogun-dev/shogun/store"
)

// The mining state is a sorted key-value map in the store (skill_state).
// Keys start with one byte saying what they hold:
const (
	keyMeta    = 'm' // m NAME → a value (see the meta* names)
	keyToken   = 't' // t PAGE → tokens: their order, the tasks that held them
	keyRecords = 'r' // r CHUNK → the records of 256 tasks (seq>>recordShift = CHUNK)
	keyGroup   = 'g' // g PAGE → groups (title, tag, proposal or cluster)
	keyList    = 'l' // l GID START → a chunk of a large group's finished members (seqs)
	keyPosting = 'p' // p ORDER START → a chunk of the similarity index
	keyOutput  = 'o' // o HASH → a settled group (one candidate each)
	keyContent = 'c' // c HASH → the text distilled for a settled group
	keyOrphan  = 'q' // q SEQ CANDIDATE → a title or similar candidate whose group is gone holds the task
	keyOrphans = 'u' // u CANDIDATE → that candidate is such an orphan
)

// errCorrupt means the mining state cannot be decoded; a full scan
// rebuilds it.
var errCorrupt = errors.New("skill mining state is damaged; run `shogun skills scan --full`")

func key1(kind byte, a uint64) []byte {
	b := make([]byte, 9)
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:], a)
	return b
}

func key2(kind byte, a, c uint64) []byte {
	b := make([]byte, 17)
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:], a)
	binary.BigEndian.PutUint64(b[9:], c)
	return b
}

func metaKey(name string) []byte { return append([]byte{keyMeta}, name...) }

// kvReader is what the cache reads through: a snapshot or a write
// transaction of the store.
type kvReader interface {
	Get(key []byte) ([]byte, bool, error)
	GetMany(keys [][]byte, fn func(key, val []byte)) error
	Range(from, to []byte, reverse bool, fn func(key, val []byte) bool) error
}

// kv is a write-back cache over the mining state: reads go to the store
// once per key, writes stay here until flush.
type kv struct {
	r     kvReader
	vals  map[string][]byte // nil value: known to be absent or deleted
	dirty map[string]bool
	// byKind lists the cached keys by their first byte, sorted when a scan
	// needs them, so that a scan merges the cache in order.
	byKind map[byte]*cachedKeys
}

type cachedKeys struct {
	keys   []string
	sorted bool
}

func newKV(r kvReader) *kv {
	return &kv{r: r, vals: map[string][]byte{}, dirty: map[string]bool{}, byKind: map[byte]*cachedKeys{}}
}

// remember caches v for key, noting a key not cached before.
func (c *kv) remember(key string, v []byte) {
	if _, ok := c.vals[key]; !ok && len(key) > 0 {
		ck := c.byKind[key[0]]
		if ck == nil {
			ck = &cachedKeys{}
			c.byKind[key[0]] = ck
		}
		ck.keys = append(ck.keys, key)
		ck.sorted = false
	}
	c.vals[key] = v
}

func (c *kv) get(key []byte) ([]byte, error) {
	if v, ok := c.vals[string(key)]; ok {
		return v, nil
	}
	v, err := c.peek(key)
	if err != nil {
		return nil, err
	}
	c.remember(string(key), v)
	return v, nil
}

// peek is get without caching a value read from the store: for values
// read once and dropped, which would otherwise stay in memory until the
// scan ends.
func (c *kv) peek(key []byte) ([]byte, error) {
	if v, ok := c.vals[string(key)]; ok {
		return v, nil
	}
	v, ok, err := c.r.Get(key)
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// prefetch reads the keys not cached yet in as few queries as it can.
func (c *kv) prefetch(keys [][]byte) error {
	var need [][]byte
	for _, k := range keys {
		if _, ok := c.vals[string(k)]; !ok {
			need = append(need, k)
			c.remember(string(k), nil)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return c.r.GetMany(need, func(k, v []byte) { c.vals[string(k)] = v })
}

func (c *kv) put(key, val []byte) {
	c.remember(string(key), val)
	c.dirty[string(key)] = true
}

func (c *kv) del(key []byte) {
	c.remember(string(key), nil)
	c.dirty[string(key)] = true
}

// cached returns the cached keys in [from, to), ascending.
func (c *kv) cached(from, to []byte) []string {
	if len(from) == 0 {
		return nil
	}
	var out []string
	for kind := from[0]; ; kind++ {
		if ck := c.byKind[kind]; ck != nil {
			if !ck.sorted {
				sort.Strings(ck.keys)
				ck.keys = slices.Compact(ck.keys)
				ck.sorted = true
			}
			i := sort.SearchStrings(ck.keys, string(from))
			for ; i < len(ck.keys); i++ {
				if to != nil && ck.keys[i] >= string(to) {
					break
				}
				out = append(out, ck.keys[i])
			}
		}
		if kind == 255 || (to != nil && (len(to) == 0 || kind >= to[0])) {
			break
		}
	}
	return out
}

// scan calls fn with the keys in [from, to) and their values, ascending
// (descending if reverse), the cache's writes included, until fn returns
// false. The slices passed to fn are only valid during the call.
func (c *kv) scan(from, to []byte, reverse bool, fn func(key, val []byte) bool) error {
	cached := c.cached(from, to)
	if reverse {
		slices.Reverse(cached)
	}
	before := func(a, b string) bool {
		if reverse {
			return a > b
		}
		return a < b
	}
	i := 0
	stopped := false
	// emit gives the cached keys that come before key (all of them if
	// key is nil), and says whether to go on.
	emit := func(key []byte, all bool) bool {
		for i < len(cached) && (all || before(cached[i], string(key))) {
			k := cached[i]
			i++
			if v := c.vals[k]; v != nil && !fn([]byte(k), v) {
				stopped = true
				return false
			}
		}
		return true
	}
	err := c.r.Range(from, to, reverse, func(k, v []byte) bool {
		if !emit(k, false) {
			return false
		}
		if i < len(cached) && cached[i] == string(k) {
			return true // the cache's value, given in turn
		}
		if !fn(k, v) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil || stopped {
		return err
	}
	emit(nil, true)
	return nil
}

// floor returns the greatest key in [from, key] with a value, and it.
func (c *kv) floor(from, key []byte) ([]byte, []byte, error) {
	var fk, fv []byte
	err := c.scan(from, append(append([]byte(nil), key...), 0), true, func(k, v []byte) bool {
		fk, fv = k, v
		return false
	})
	return fk, fv, err
}

// flush writes the cached changes.
func (c *kv) flush(tx *store.MineTx) error {
	keys := make([]string, 0, len(c.dirty))
	for k := range c.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c.vals[k]
		var err error
		if v == nil {
			err = tx.Delete([]byte(k))
		} else {
			err = tx.Put([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	c.dirty = map[string]bool{}
	return nil
}

// The meta values.
const (
	metaFormat   = "format"   // formatVersion
	metaOptions  = "options"  // the threshold and similarity the state was mined with
	metaCursor   = "cursor"   // the last seq read, and how many tasks up to it
	metaTasks    = "tasks"    // finished tasks mined
	metaOrders   = "orders"   // the next order for a token first seen
	metaDecided  = "decided"  // the last skill decision seen
	metaGrowth   = "growth"   // the reopen growth of the last scan
	metaClusters = "clusters" // the next cluster id
	metaRebuild  = "rebuild"  // a full scan is running, until this unix time
)

// formatVersion changes whenever the state's encoding or the mining
// algorithm does: a state of another version is rebuilt.
const formatVersion = 5 // 5: records keep their chain's root; groups count chains

// enc and dec write and read the varint-encoded values.
type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }

type dec struct {
	b   []byte
	err error
	// skip reads strings past without making them.
	skip bool
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) s() string {
	n := d.u()
	if d.err != nil {
		return ""
	}
	if uint64(len(d.b)) < n {
		d.err = errCorrupt
		return ""
	}
	var v string
	if !d.skip {
		v = string(d.b[:n])
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) more() bool { return d.err == nil && len(d.b) > 0 }

func (d *dec) check(what string) error {
	if d.err != nil {
		return fmt.Errorf("%s: %w", what, d.err)
	}
	return nil
}
