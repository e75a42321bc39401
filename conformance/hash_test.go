package conformance

import (
	"bufio"
	"crypto/md5"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// consistentHash is the CONSISTENT_HASH route as scheduler.md §8 describes it: 100
// virtual nodes per address on an MD5 ring (first four digest bytes, little-endian),
// the job id's hash picks the first node at or after it, wrapping round.
func consistentHash(jobID int, addrs []string) string {
	hash := func(s string) uint32 {
		d := md5.Sum([]byte(s))
		return uint32(d[3])<<24 | uint32(d[2])<<16 | uint32(d[1])<<8 | uint32(d[0])
	}
	ring := map[uint32]string{}
	for _, a := range addrs {
		for i := range 100 {
			ring[hash("SHARD-"+a+"-NODE-"+strconv.Itoa(i))] = a
		}
	}
	keys := make([]uint32, 0, len(ring))
	for k := range ring {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	h := hash(strconv.Itoa(jobID))
	i := sort.Search(len(keys), func(i int) bool { return keys[i] >= h })
	if i == len(keys) {
		i = 0
	}
	return ring[keys[i]]
}

// The suite's own CONSISTENT_HASH expectation agrees with the vectors recorded from
// the Java admin's algorithm. This checks the judge, not an admin: the route scenario
// then holds every admin under test to this expectation (the job's run must reach the
// address it names), and scheduler/route's TestConsistentHashVectors checks our
// admin's own ring against the same file.
func TestConsistentHashVectors(t *testing.T) {
	f, err := os.Open("../scheduler/route/testdata/consistent-hash-vectors.tsv")
	require.NoError(t, err, "the vectors are part of the repository")
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 || cols[0] == "job_id" {
			continue
		}
		id, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatalf("vector %q: %v", sc.Text(), err)
		}
		if got := consistentHash(id, strings.Split(cols[1], ",")); got != cols[2] {
			t.Errorf("job %d over %s: got %s, want %s", id, cols[1], got, cols[2])
		}
		n++
	}
	if n == 0 {
		t.Fatal("no vectors read")
	}
}
