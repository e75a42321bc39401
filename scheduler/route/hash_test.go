package route

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type hashVector struct {
	where string // file:line
	jobID int
	list  []string
	want  string
}

// readHashVectors reads a TSV with columns job_id, address_list (comma-joined),
// chosen. A header row, blank lines and #-comments are skipped.
func readHashVectors(t *testing.T, path string) []hashVector {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []hashVector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "job_id\t") {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, line)
		cols := strings.Split(text, "\t")
		require.Len(t, cols, 3, where)
		id, err := strconv.Atoi(cols[0])
		require.NoError(t, err, where)
		out = append(out, hashVector{where: where, jobID: id, list: strings.Split(cols[1], ","), want: cols[2]})
	}
	require.NoError(t, sc.Err())
	return out
}

// TestConsistentHashVectors checks the conformance vectors, plus any files named by
// XXL_HASH_VECTORS (a path list; each element may be a glob).
func TestConsistentHashVectors(t *testing.T) {
	t.Parallel()
	files := []string{filepath.Join("testdata", "consistent-hash-vectors.tsv")}
	for _, p := range filepath.SplitList(os.Getenv("XXL_HASH_VECTORS")) {
		if p == "" {
			continue
		}
		m, err := filepath.Glob(p)
		require.NoError(t, err, p)
		require.NotEmpty(t, m, "XXL_HASH_VECTORS: nothing matches %s", p)
		files = append(files, m...)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			vectors := readHashVectors(t, file)
			require.NotEmpty(t, vectors)
			for _, v := range vectors {
				require.Equal(t, v.want, tb.route(t, ConsistentHash, v.jobID, v.list, tb.now), "%s job %d", v.where, v.jobID)
				// The cached ring answers the same.
				require.Equal(t, v.want, tb.route(t, ConsistentHash, v.jobID, v.list, tb.now), "%s job %d (cached)", v.where, v.jobID)
			}
			t.Logf("%d vectors from %s", len(vectors), file)
		})
	}
}

func TestHashKey(t *testing.T) {
	t.Parallel()
	// MD5("") = d41d8cd98f00b204e9800998ecf8427e; bytes 0..3 little-endian.
	require.Equal(t, uint32(0xd98c1dd4), hashKey(nil))
	// MD5("1") = c4ca4238a0b923820dcc509a6f75849b.
	require.Equal(t, uint32(0x3842cac4), hashKey([]byte("1")))
}

func TestConsistentHashRing(t *testing.T) {
	t.Parallel()
	list := []string{"http://a:9999/", "http://b:9999/", "http://c:9999/", "http://d:9999/"}
	r := buildRing(list)
	require.Len(t, r.keys, 400, "no collisions among these 400 virtual nodes")
	for i := 1; i < len(r.keys); i++ {
		require.Less(t, r.keys[i-1], r.keys[i])
	}

	// Dropping an executor moves only the jobs it owned.
	smaller := buildRing([]string{list[0], list[1], list[3]})
	moved := 0
	for job := 1; job <= 2000; job++ {
		before, after := r.pick(job), smaller.pick(job)
		if before != list[2] {
			require.Equal(t, before, after, "job %d", job)
		} else {
			moved++
		}
	}
	require.Positive(t, moved)

	// Identical keys: the address listed later owns them.
	dup := buildRing([]string{"x", "x"})
	require.Len(t, dup.keys, 100)
	for _, o := range dup.owner {
		require.Equal(t, int32(1), o)
	}
}

func TestRingCache(t *testing.T) {
	t.Parallel()
	var c ringCache
	c.init(4)
	a := []string{"a", "b"}
	ra := c.get(a)
	require.Same(t, ra, c.get([]string{"a", "b"}), "one ring per distinct list")
	require.NotSame(t, ra, c.get([]string{"b", "a"}))
	require.NotSame(t, ra, c.get([]string{"ab"}))

	// The ring keeps its own copy of the list.
	a[0] = "changed"
	require.Equal(t, []string{"a", "b"}, c.get([]string{"a", "b"}).addrs)

	// Bounded: the oldest lists are evicted.
	for i := range 10 {
		c.get([]string{strconv.Itoa(i)})
	}
	require.Len(t, c.rings, 4)
	require.Len(t, c.order, 4)
	require.Same(t, c.get([]string{"9"}), c.get([]string{"9"}))
	c.mu.RLock()
	_, kept := c.rings[c.key([]string{"a", "b"})]
	c.mu.RUnlock()
	require.False(t, kept)

	// A hash collision (simulated) is detected by comparing the lists.
	c.get([]string{"p"})
	k := c.key([]string{"p"})
	c.mu.Lock()
	c.rings[k] = buildRing([]string{"q"})
	c.mu.Unlock()
	require.Equal(t, []string{"p"}, c.get([]string{"p"}).addrs)
	require.Len(t, c.rings, 4)
}
