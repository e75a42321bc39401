package route

import (
	"cmp"
	"crypto/md5"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
)

const (
	// virtualNodes per address on the consistent-hash ring (upstream VIRTUAL_NODE_NUM).
	virtualNodes = 100
	// maxRings bounds the ring cache; there is one distinct list per executor group
	// plus manual address overrides, so this is generous.
	maxRings = 1024
)

// hashKey is upstream's ring hash: MD5 of the UTF-8 bytes, digest bytes 0..3 read as a
// little-endian unsigned 32-bit number.
func hashKey(b []byte) uint32 {
	d := md5.Sum(b)
	return binary.LittleEndian.Uint32(d[:4])
}

// ring is the sorted consistent-hash ring of one address list.
type ring struct {
	addrs []string // the list it was built from (a private copy)
	keys  []uint32 // ascending, unique
	owner []int32  // owner[i] indexes addrs for keys[i]
}

func buildRing(list []string) *ring {
	type node struct {
		key   uint32
		owner int32
	}
	nodes := make([]node, 0, len(list)*virtualNodes)
	var buf []byte
	for i, a := range list {
		for v := range virtualNodes {
			buf = append(buf[:0], "SHARD-"...)
			buf = append(buf, a...)
			buf = append(buf, "-NODE-"...)
			buf = strconv.AppendInt(buf, int64(v), 10)
			nodes = append(nodes, node{hashKey(buf), int32(i)})
		}
	}
	// Insertion order decides equal keys: a later address overwrites an earlier one, so
	// after a stable sort the last node of each run of equal keys is the owner.
	slices.SortStableFunc(nodes, func(x, y node) int { return cmp.Compare(x.key, y.key) })
	r := &ring{addrs: slices.Clone(list), keys: make([]uint32, 0, len(nodes)), owner: make([]int32, 0, len(nodes))}
	for i, n := range nodes {
		if i+1 < len(nodes) && nodes[i+1].key == n.key {
			continue
		}
		r.keys = append(r.keys, n.key)
		r.owner = append(r.owner, n.owner)
	}
	return r
}

// pick returns the owner of the first ring key at or after the job's hash, wrapping
// to the smallest key.
func (r *ring) pick(jobID int) string {
	var buf [24]byte
	h := hashKey(strconv.AppendInt(buf[:0], int64(jobID), 10))
	i, _ := slices.BinarySearch(r.keys, h)
	if i == len(r.keys) {
		i = 0
	}
	return r.addrs[r.owner[i]]
}

// ringCache keeps built rings per distinct address list, evicting the oldest entry
// once full. Lists are keyed by a seeded hash and compared in full on a hit.
type ringCache struct {
	mu    sync.RWMutex
	seed  maphash.Seed
	max   int
	rings map[uint64]*ring
	order []uint64 // insertion order for eviction; a ring buffer once full
	next  int
}

func (c *ringCache) init(max int) {
	c.seed = maphash.MakeSeed()
	c.max = max
	c.rings = make(map[uint64]*ring, max)
}

func (c *ringCache) key(list []string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, a := range list {
		h.WriteString(a)
		h.WriteByte(0)
	}
	return h.Sum64()
}

func (c *ringCache) get(list []string) *ring {
	k := c.key(list)
	c.mu.RLock()
	r := c.rings[k]
	c.mu.RUnlock()
	if r != nil && slices.Equal(r.addrs, list) {
		return r
	}
	// Built outside the lock: concurrent first uses may build twice, harmlessly.
	r = buildRing(list)
	c.mu.Lock()
	if _, ok := c.rings[k]; !ok {
		if len(c.order) < c.max {
			c.order = append(c.order, k)
		} else {
			delete(c.rings, c.order[c.next])
			c.order[c.next] = k
			c.next = (c.next + 1) % c.max
		}
	}
	c.rings[k] = r // also replaces a colliding list's ring
	c.mu.Unlock()
	return r
}
