package cron

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Vector files are tab-separated with a header line:
//
//	expr  zone  from_epoch_ms  next1 .. next5
//
// next2 is the next time after next1, and so on. NONE means no next time; a
// 4th column "INVALID: <message>" means Quartz rejects the expression with
// that message. Files whose name contains "231" are Quartz 2.3.1 vectors.
// The zone vectors (testdata/zones) hold the five times in one
// comma-separated 4th column and write "INVALID:<message>" without a space;
// both forms are read.
//
// XXL_CRON_VECTORS names extra files (comma-separated) to run as well.

// vector is one row of a vector file.
type vector struct {
	line    int
	expr    string
	zone    string
	from    int64
	invalid string   // Quartz's message when the row expects a rejection
	next    []string // epoch ms, or NONE
}

const invalidPrefix = "INVALID:"

func vectorFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range strings.Split(os.Getenv("XXL_CRON_VECTORS"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		// go test runs in the package directory; accept paths relative to
		// the repository root too.
		if _, err := os.Stat(f); err != nil && !filepath.IsAbs(f) {
			if root := filepath.Join("..", "..", f); fileExists(root) {
				f = root
			}
		}
		files = append(files, f)
	}
	return files
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func dialectOf(path string) Dialect {
	if strings.Contains(filepath.Base(path), "231") {
		return Quartz231
	}
	return Quartz252
}

func loadVectors(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()

	var rows []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if n == 1 || strings.TrimSpace(line) == "" {
			continue // header
		}
		cols := strings.Split(line, "\t")
		require.GreaterOrEqual(t, len(cols), 4, "%s:%d: too few columns", path, n)
		from, err := strconv.ParseInt(cols[2], 10, 64)
		require.NoError(t, err, "%s:%d: from_epoch_ms", path, n)
		v := vector{line: n, expr: cols[0], zone: cols[1], from: from}
		switch msg, ok := strings.CutPrefix(cols[3], invalidPrefix); {
		case ok:
			v.invalid = strings.TrimSpace(msg)
		case len(cols) == 4:
			v.next = strings.Split(cols[3], ",")
		default:
			v.next = cols[3:]
		}
		rows = append(rows, v)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "%s: no vectors", path)
	return rows
}

// checkVector runs one row: the rejection message, or each chained Next.
func checkVector(t *testing.T, v vector, d Dialect) {
	t.Helper()
	e, err := ParseDialect(v.expr, d)
	if v.invalid != "" {
		require.Error(t, err, "%q must be rejected with %q", v.expr, v.invalid)
		require.True(t, strings.HasPrefix(err.Error(), v.invalid),
			"%q: got error %q, want %q", v.expr, err.Error(), v.invalid)
		return
	}
	require.NoError(t, err, "%q must parse", v.expr)
	require.Equal(t, v.expr, e.String())

	loc, err := time.LoadLocation(v.zone)
	require.NoError(t, err)
	after := time.UnixMilli(v.from)
	for i, want := range v.next {
		if after.IsZero() { // an earlier step had no next time
			require.True(t, noNext(want), "%q step %d after NONE: want %s", v.expr, i+1, want)
			continue
		}
		got, ok := e.Next(after, loc)
		if noNext(want) {
			require.False(t, ok, "%q in %s after %s: step %d want NONE, got %s",
				v.expr, v.zone, after.In(loc), i+1, got)
			after = time.Time{}
			continue
		}
		wantMs, err := strconv.ParseInt(want, 10, 64)
		require.NoError(t, err, "next%d", i+1)
		require.True(t, ok, "%q in %s after %s: step %d want %s, got NONE",
			v.expr, v.zone, after.In(loc), i+1, time.UnixMilli(wantMs).In(loc))
		require.Equal(t, time.UnixMilli(wantMs).In(loc).String(), got.String(),
			"%q in %s after %s: step %d", v.expr, v.zone, after.In(loc), i+1)
		require.Equal(t, loc, got.Location())
		after = got
	}
}

// noNext reports whether a vector cell expects no next time. ERROR (Quartz
// threw at evaluation, e.g. an empty month set) maps to no next time too.
func noNext(cell string) bool { return cell == "NONE" || strings.HasPrefix(cell, "ERROR") }

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, path := range vectorFiles(t) {
		d := dialectOf(path)
		rows := loadVectors(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			for _, v := range rows {
				t.Run(strconv.Itoa(v.line), func(t *testing.T) {
					checkVector(t, v, d)
				})
			}
		})
	}
}

// TestVectorsTimeZoneQuartz252 runs cron-tz-vectors-public-3.4.2.tsv: 147
// rows computed by xxl-job 3.4.2's CronExpression (Quartz 2.5.2) after
// setTimeZone, in 11 zones (30-minute, 45-minute and southern-hemisphere DST
// among them), mostly within three days of a transition. They pin Quartz's
// gap rule (a wall time that does not exist fires at the same wall time an
// hour on, or not at all when the hour is already matched later) and its
// overlap rule (a repeated wall time fires once, at the later instant).
func TestVectorsTimeZoneQuartz252(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "zones", "cron-tz-vectors-public-3.4.2.tsv")
	rows := loadVectors(t, path)
	require.Len(t, rows, 147)
	for _, v := range rows {
		t.Run(strconv.Itoa(v.line), func(t *testing.T) {
			t.Parallel()
			checkVector(t, v, Quartz252)
		})
	}
}
