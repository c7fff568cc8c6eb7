package store

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReplaceRange replaces a range of the state by one that keeps some
// keys as they were, changes some, drops some and adds some, reading the
// old state in batches of several sizes (a batch can end on any kind of
// key): the range must end up as yielded, the keys outside it untouched,
// and SQLite must see a write for each key that differs and none for
// those that do not.
func TestReplaceRange(t *testing.T) {
	type kv = map[string]string
	cases := []struct {
		name     string
		old, new kv
	}{
		{"empty to some", kv{}, kv{"p1": "a", "p2": "b"}},
		{"some to empty", kv{"p1": "a", "p2": "b"}, kv{}},
		{"same", kv{"p1": "a", "p2": "b", "p3": "c"}, kv{"p1": "a", "p2": "b", "p3": "c"}},
		{"mixed", kv{"p1": "a", "p2": "b", "p4": "d", "p6": "f", "p7": "g", "q1": "x"},
			kv{"p1": "a", "p3": "c", "p4": "D", "p5": "e", "p7": "g", "q2": "y"}},
		{"new keys between old ones", kv{"p1": "a", "p3": "c", "p5": "e"},
			kv{"p1": "a", "p2": "b", "p3": "c", "p4": "d", "p5": "e", "p6": "f"}},
		{"all gone but the last", kv{"p1": "a", "p2": "b", "p3": "c", "p4": "d"}, kv{"p4": "d", "p5": "e"}},
		{"all new after the old", kv{"p1": "a", "p2": "b"}, kv{"p3": "c", "p4": "d", "p5": "e"}},
	}
	// Keys out of [p, r): not the state being replaced.
	outside := kv{"a1": "keep", "o9": "keep too", "r": "kept", "r1": "kept too"}
	for _, c := range cases {
		for _, batch := range []int{1, 2, 3, replaceBatch} {
			t.Run(fmt.Sprintf("%s/batch %d", c.name, batch), func(t *testing.T) {
				s := openAt(t, filepath.Join(t.TempDir(), "shogun.db"))
				err := s.UpdateMine(func(tx *MineTx) error {
					for k, v := range maps.All(outside) {
						if err := tx.Put([]byte(k), []byte(v)); err != nil {
							return err
						}
					}
					for k, v := range maps.All(c.old) {
						if err := tx.Put([]byte(k), []byte(v)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.w.Exec(`CREATE TABLE writes (k BLOB, what TEXT);
CREATE TRIGGER w_ins AFTER INSERT ON skill_state BEGIN INSERT INTO writes VALUES (NEW.k, 'put'); END;
CREATE TRIGGER w_upd AFTER UPDATE ON skill_state BEGIN INSERT INTO writes VALUES (NEW.k, 'put'); END;
CREATE TRIGGER w_del AFTER DELETE ON skill_state BEGIN INSERT INTO writes VALUES (OLD.k, 'delete'); END;`); err != nil {
					t.Fatal(err)
				}
				err = s.UpdateMine(func(tx *MineTx) error {
					return tx.replaceRange([]byte("p"), []byte("r"), batch, func(yield func(k, v []byte) error) error {
						for _, k := range slices.Sorted(maps.Keys(c.new)) {
							if err := yield([]byte(k), []byte(c.new[k])); err != nil {
								return err
							}
						}
						return nil
					})
				})
				if err != nil {
					t.Fatal(err)
				}
				want := maps.Clone(outside)
				maps.Copy(want, c.new)
				if got := stateOf(t, s); !maps.Equal(got, want) {
					t.Errorf("state %v, want %v", got, want)
				}
				var wantWrites []string
				for k := range maps.Keys(c.old) {
					if _, ok := c.new[k]; !ok {
						wantWrites = append(wantWrites, k+" delete")
					}
				}
				for k, v := range maps.All(c.new) {
					if old, ok := c.old[k]; !ok || old != v {
						wantWrites = append(wantWrites, k+" put")
					}
				}
				slices.Sort(wantWrites)
				if got := writesOf(t, s); !slices.Equal(got, wantWrites) {
					t.Errorf("writes %v, want %v (only what differs)", got, wantWrites)
				}
			})
		}
	}
}

// TestReplaceRangeRefusesKeysOutOfOrder: a key out of order, or out of
// the range, is an error, and the transaction leaves the state as it was.
func TestReplaceRangeRefusesKeysOutOfOrder(t *testing.T) {
	for _, keys := range [][]string{{"p2", "p1"}, {"p1", "p1"}, {"a1"}, {"p1", "r"}} {
		t.Run(strings.Join(keys, ","), func(t *testing.T) {
			s := openAt(t, filepath.Join(t.TempDir(), "shogun.db"))
			if err := s.UpdateMine(func(tx *MineTx) error { return tx.Put([]byte("p0"), []byte("old")) }); err != nil {
				t.Fatal(err)
			}
			err := s.UpdateMine(func(tx *MineTx) error {
				return tx.ReplaceRange([]byte("p"), []byte("r"), func(yield func(k, v []byte) error) error {
					for _, k := range keys {
						if err := yield([]byte(k), []byte("new")); err != nil {
							return err
						}
					}
					return nil
				})
			})
			if err == nil || !strings.Contains(err.Error(), "mining state") {
				t.Fatalf("err %v, want a mining state error", err)
			}
			if got := stateOf(t, s); !maps.Equal(got, map[string]string{"p0": "old"}) {
				t.Errorf("state %v after a refused replace, want it as it was", got)
			}
		})
	}
}

func stateOf(t *testing.T, s *Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := s.ViewMine(func(v *MineView) error {
		return v.Range([]byte{0}, nil, false, func(k, val []byte) bool {
			got[string(k)] = string(val)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func writesOf(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.r.Query(`SELECT k, what FROM writes`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k []byte
		var what string
		if err := rows.Scan(&k, &what); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(k)+" "+what)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
