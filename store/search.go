package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"modernc.org/sqlite"
)

// The history is searchable through task_search, an SQLite FTS5 table with
// one row per task (its rowid is the task's seq, which VACUUM never
// renumbers): the title, the body, and the report text (the task's summary,
// and the summary and details of every report about it). The table is
// contentless: the words are indexed, the text itself stays in tasks and
// reports only, so the index costs a fraction of the text it covers.
// Triggers keep it current in the transaction of every write; a database
// from before the index is indexed by Open (backfillSearch).
//
// FTS5's unicode61 tokenizer makes words of letters and digits, folds case
// and Latin accents, and treats everything else as a separator. Chinese and
// Japanese are written without spaces, so a whole sentence would be one
// word; searchText puts each such character apart, which makes every
// character a word and any run of them a phrase a search can find. The
// triggers call it as the SQL function shogun_search_text, registered with
// the driver below: a program without it (the sqlite3 shell) can read the
// database but cannot change a task's title, body or summary, or add a
// report.

// searchFunc is the SQL name of searchText.
const searchFunc = "shogun_search_text"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(searchFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case nil:
			return "", nil
		case string:
			return searchText(v), nil
		case []byte:
			return searchText(string(v)), nil
		default:
			return fmt.Sprint(v), nil
		}
	})
}

// unspaced reports whether r belongs to a script written without spaces
// between words (Han, Hiragana, Katakana, Hangul and their marks), whose
// characters are therefore indexed one by one.
func unspaced(r rune) bool {
	if r < 0x1100 {
		return false
	}
	switch r {
	case 'ー', 'ｰ', '々', '〆', 'ゝ', 'ゞ', 'ヽ', 'ヾ':
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// searchText is s as the index sees it: each character of an unspaced
// script stands apart, so the tokenizer makes it a word of its own.
func searchText(s string) string {
	i := strings.IndexFunc(s, unspaced)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unspaced(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// searchQuery turns what a person typed into an FTS5 query that means what
// the documentation says and can never be a syntax error:
//   - words separated by spaces must all be found, in any field and order;
//   - "words in double quotes" must be found next to each other, in order;
//   - a word that ends in * matches the words that begin with it;
//   - everything else is text: FTS5's operators (AND, OR, NOT, NEAR, a
//     column name and colon, ^, +, -, parentheses) are quoted like any word.
//
// Each term becomes an FTS5 string ("..." with " doubled), so no character
// a person types reaches the query syntax. A term with no letter or digit
// (say, "--") tokenizes to nothing and is ignored by FTS5; a search made
// only of such terms finds nothing. The result is "" when s is blank.
func searchQuery(s string) string {
	var terms []string
	add := func(text string, prefix bool) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		q := `"` + strings.ReplaceAll(searchText(text), `"`, `""`) + `"`
		if prefix {
			q += " *"
		}
		terms = append(terms, q)
	}
	for rest := s; rest != ""; {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		if rest[0] == '"' {
			// A phrase, to the closing quote or the end of the text.
			body, after, closed := strings.Cut(rest[1:], `"`)
			if !closed {
				after = ""
			}
			prefix := strings.HasPrefix(after, "*")
			if prefix {
				after = after[1:]
			}
			add(body, prefix)
			rest = after
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(rest)
		}
		word := rest[:end]
		rest = rest[end:]
		prefix := strings.HasSuffix(word, "*")
		add(strings.TrimRight(word, "*"), prefix)
	}
	if len(terms) == 0 && strings.TrimSpace(s) != "" {
		// Only quotes and stars: a search for nothing finds nothing.
		return `""`
	}
	return strings.Join(terms, " ")
}

// reindexSQL indexes the tasks whose seq lies in [?1, ?2], replacing
// nothing: backfillSearch runs it only on tasks the triggers have left
// alone. It is the triggers' expression (see the migration).
const reindexSQL = `INSERT INTO task_search (rowid, title, body, report)
SELECT t.seq, shogun_search_text(t.title), shogun_search_text(t.body),
  shogun_search_text(t.summary || char(10) || COALESCE((SELECT group_concat(r.summary || char(10) || r.details, char(10))
    FROM reports r WHERE r.task_id = t.id), ''))
FROM tasks t WHERE t.seq BETWEEN ?1 AND ?2`

// Progress reports how far a long step of Open has come: Done of Total
// tasks indexed for search, so far.
type Progress struct {
	Step        string // what is being done, for people: "building the search index"
	Done, Total int64
}

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	ctx      context.Context
	progress func(Progress)
	batch    int64 // tasks in the first backfill batch; 0: 2000
}

// WithContext lets ctx interrupt a long step of Open (building the search
// index of an existing history); the work done so far is kept, and the
// next Open continues from there.
func WithContext(ctx context.Context) Option {
	return func(o *openOptions) { o.ctx = ctx }
}

// WithProgress has Open call fn as a long step advances (building the
// search index of an existing history: every few thousand tasks), from the
// goroutine that called Open. fn is not called when there is nothing long
// to do.
func WithProgress(fn func(Progress)) Option {
	return func(o *openOptions) { o.progress = fn }
}

// backfillBatchTime is what one backfill transaction aims to take: long
// enough that per-transaction costs do not matter, short enough that
// another process opening the history meanwhile waits little and Ctrl-C is
// felt at once.
const backfillBatchTime = 250 * time.Millisecond

// backfillSearch indexes the tasks a migration left to index (a history
// from before the search index): the ranges of seq in search_backfill, in
// batches of one transaction each, so an interrupted build keeps what it
// did and another process may share the work. The triggers skip the tasks
// in those ranges (they are indexed here, as they are when their batch
// comes), so no task is indexed twice.
func (s *Store) backfillSearch(o openOptions) error {
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	batch := o.batch
	if batch <= 0 {
		batch = 2000
	}
	var total int64 = -1
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("build the search index: %w (the tasks indexed so far are kept; the next start continues)", err)
		}
		began := time.Now()
		var left int64
		err := s.write(func(tx *writeTx) error {
			var (
				id, from, last int64
				all            sql.NullInt64
			)
			err := tx.QueryRow(`SELECT rowid, next_seq, last_seq, (SELECT SUM(last_seq - next_seq + 1) FROM search_backfill)
FROM search_backfill ORDER BY next_seq LIMIT 1`).Scan(&id, &from, &last, &all)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			if total < 0 {
				total = all.Int64
			}
			hi := min(from+batch-1, last)
			if _, err := tx.Tx.Exec(reindexSQL, from, hi); err != nil {
				return err
			}
			if hi >= last {
				_, err = tx.Tx.Exec(`DELETE FROM search_backfill WHERE rowid = ?`, id)
			} else {
				_, err = tx.Tx.Exec(`UPDATE search_backfill SET next_seq = ? WHERE rowid = ?`, hi+1, id)
			}
			left = all.Int64 - (hi - from + 1)
			return err
		})
		if err != nil {
			return fmt.Errorf("build the search index: %w", err)
		}
		if total < 0 {
			return nil // nothing was left to index
		}
		if o.progress != nil {
			o.progress(Progress{Step: "building the search index", Done: max(0, total-left), Total: total})
		}
		if left <= 0 {
			return nil
		}
		// Aim each batch at backfillBatchTime.
		switch took := time.Since(began); {
		case took < backfillBatchTime/2 && batch < 64000:
			batch *= 2
		case took > backfillBatchTime*2 && batch > 100:
			batch /= 2
		}
	}
}

// bulkIndex indexes the tasks of a bulk insert (seq lo to hi) in one
// statement once they are all in, in the same transaction. Left to the
// triggers, a report added after its task makes FTS5 write its pending
// index to disk once per task, which made a bulk insert ten times slower.
type bulkIndex struct {
	tx     *writeTx
	id     int64 // the search_backfill row that holds the triggers off
	lo, hi int64
}

// beginBulkIndex holds the triggers off seq lo to hi until end.
func beginBulkIndex(tx *writeTx, lo, hi int64) (*bulkIndex, error) {
	b := &bulkIndex{tx: tx, lo: lo, hi: hi}
	if hi < lo {
		return b, nil
	}
	res, err := tx.Tx.Exec(`INSERT INTO search_backfill (next_seq, last_seq) VALUES (?, ?)`, lo, hi)
	if err != nil {
		return nil, err
	}
	b.id, err = res.LastInsertId()
	return b, err
}

// end indexes the tasks inserted since beginBulkIndex.
func (b *bulkIndex) end() error {
	if b.hi < b.lo {
		return nil
	}
	if _, err := b.tx.Tx.Exec(reindexSQL, b.lo, b.hi); err != nil {
		return err
	}
	_, err := b.tx.Tx.Exec(`DELETE FROM search_backfill WHERE rowid = ?`, b.id)
	return err
}
