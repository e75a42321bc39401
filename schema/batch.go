package schema

import (
	"cmp"
	"slices"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// MaxBatchRows bounds the rows one multi-row statement handles. MySQL allows 65,535
// placeholders per statement; a CASE update uses two per row and column, so callers
// split larger batches into chunks of this size.
const MaxBatchRows = 1000

// caseByID builds the value of a column in a multi-row UPDATE whose WHERE clause limits
// the rows to ids: val(i) is the value for ids[i]. A value shared by every row is
// written once, as a constant. Otherwise the rows are found by a binary search on id
// — `CASE WHEN id < ? THEN … ELSE … END` down to simple `CASE id WHEN ? THEN ? … END`
// leaves of at most caseLeaf rows — instead of one simple CASE over all ids: MySQL
// tries a simple CASE's branches in order, so 500 rows cost 125,000 comparisons per
// column, which the database profile showed at 12% of the server's CPU. For a repeated
// id the first value wins, as in a simple CASE. It does the job of squirrel's
// CaseBuilder at a fraction of the allocations (that showed at 5% of the admin's CPU).
//
// On PostgreSQL the values are cast to the SQL type of their Go type: the server
// cannot infer a parameter's type from a CASE branch (it would take text, which no
// number or TIMESTAMP column accepts).
func caseByID[K int | int64](d Dialect, ids []K, val func(i int) any) sq.Sqlizer {
	vals := make([]any, len(ids))
	same := true
	for i := range ids {
		vals[i] = val(i)
		same = same && sameArg(vals[0], vals[i])
	}
	var b strings.Builder
	args := make([]any, 0, 2*len(ids)+len(ids)/caseLeaf)
	cast := ""
	if d.Name() == (PostgreSQL{}).Name() && !same {
		for _, v := range vals {
			if cast = pgCastType(v); cast != "" {
				break
			}
		}
	}
	// then writes a value: a placeholder, or the name of a kept column.
	then := func(v any) {
		if c, ok := v.(column); ok {
			b.WriteString(string(c))
			return
		}
		if cast != "" {
			b.WriteString("CAST(? AS ")
			b.WriteString(cast)
			b.WriteByte(')')
		} else {
			b.WriteByte('?')
		}
		args = append(args, v)
	}
	if same && len(ids) > 0 {
		then(vals[0])
		return sq.Expr(b.String(), args...)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	if !slices.IsSorted(ids) {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	}
	b.Grow(40 + 16*len(ids))
	var build func(o []int)
	build = func(o []int) {
		// Split in the middle, at the start of a run of equal ids (or after it, when it
		// starts the range), so that a repeated id stays on one side.
		mid := len(o) / 2
		for mid > 0 && ids[o[mid-1]] == ids[o[mid]] {
			mid--
		}
		for mid == 0 || mid < len(o) && ids[o[mid-1]] == ids[o[mid]] {
			mid++
		}
		if len(o) <= caseLeaf || mid == len(o) {
			b.WriteString("CASE id")
			for _, i := range o {
				b.WriteString(" WHEN ? THEN ")
				args = append(args, ids[i])
				then(vals[i])
			}
			b.WriteString(" END")
			return
		}
		b.WriteString("CASE WHEN id < ? THEN ")
		args = append(args, ids[o[mid]])
		build(o[:mid])
		b.WriteString(" ELSE ")
		build(o[mid:])
		b.WriteString(" END")
	}
	build(order)
	return sq.Expr(b.String(), args...)
}

// column is a value of caseByID that keeps a row's current value of the named column
// (a name from this package's code, never from input).
type column string

// pgCastType is the PostgreSQL type a value of caseByID is cast to, or "" for NULL
// and kept columns.
func pgCastType(v any) string {
	switch v.(type) {
	case int, int64:
		return "BIGINT"
	case string:
		return "TEXT"
	case time.Time:
		return "TIMESTAMP"
	}
	return ""
}

// caseLeaf is the most rows a simple CASE of caseByID lists.
const caseLeaf = 16

// sameArg reports that two statement arguments are certainly written alike.
func sameArg(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case column:
		y, ok := b.(column)
		return ok && x == y
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return false
}

// Chunks calls fn for consecutive ranges [lo, hi) of at most size elements of n.
func Chunks(n, size int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += size {
		if err := fn(lo, min(lo+size, n)); err != nil {
			return err
		}
	}
	return nil
}
