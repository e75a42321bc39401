package scheduler_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// rounds runs lease rounds of the admins, in turn, until their holdings stop changing
// (at most 10 passes).
func rounds(t *testing.T, admins ...*testBundle) {
	t.Helper()
	prev := ""
	for range 10 {
		cur := ""
		for _, a := range admins {
			require.NoError(t, a.sched.LeaseRound())
		}
		for _, a := range admins {
			cur += "|" + intsKey(a.sched.HeldPartitions())
		}
		if cur == prev {
			return
		}
		prev = cur
	}
	t.Fatalf("lease holdings did not settle: %s", prev)
}

func intsKey(xs []int) string {
	b := make([]byte, 0, 3*len(xs))
	for _, x := range xs {
		b = append(b, byte('0'+x/10), byte('0'+x%10), ',')
	}
	return string(b)
}

// requireSpread checks that the admins hold every partition once, each between
// ⌊n/len⌋ and ⌈n/len⌉ of them.
func requireSpread(t *testing.T, n int, admins ...*testBundle) {
	t.Helper()
	var all []int
	lo, hi := n/len(admins), (n+len(admins)-1)/len(admins)
	for i, a := range admins {
		h := a.sched.HeldPartitions()
		require.GreaterOrEqual(t, len(h), lo, "admin %d holds %v", i, h)
		require.LessOrEqual(t, len(h), hi, "admin %d holds %v", i, h)
		all = append(all, h...)
	}
	slices.Sort(all)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, all, "every partition held by exactly one admin")
}

// expire ends an admin's leases and member row as if its lease time had passed
// without a renewal (it stopped): the database's clock is not the test's to move.
func expire(t *testing.T, b *testBundle, instance string) {
	t.Helper()
	b.db.Exec(t, "UPDATE "+schema.LeaseTable+" SET expire_time = 0 WHERE owner = ?", instance)
	b.db.Exec(t, "UPDATE "+schema.MemberTable+" SET expire_time = 0 WHERE instance = ?", instance)
}

// Partitions spread evenly over the admins, move to an admin that joins, come back
// from one that leaves, and are taken over from one that stops without leaving.
func TestPartitionLeasesSpreadAndRebalance(t *testing.T) {
	t.Parallel()
	const n = 12
	a := setup(t, bundleOpts{partitions: n})
	rounds(t, a)
	requireSpread(t, n, a)
	b := setup(t, bundleOpts{shareDB: a, partitions: n})
	rounds(t, a, b)
	requireSpread(t, n, a, b)
	c := setup(t, bundleOpts{shareDB: a, partitions: n})
	rounds(t, a, b, c)
	requireSpread(t, n, a, b, c)
	d := setup(t, bundleOpts{shareDB: a, partitions: n})
	rounds(t, d, c, b, a)
	requireSpread(t, n, a, b, c, d)

	// D stops gracefully: it releases its leases and leaves at once.
	d.sched.Stop(context.Background())
	rounds(t, a, b, c)
	requireSpread(t, n, a, b, c)
	// C stops dead: its leases and member row expire; the others take its partitions.
	cParts := c.sched.HeldPartitions()
	expire(t, a, c.sched.LeaseInstance())
	takenBefore := func() int64 { x, _ := a.sched.LeaseCounters(); y, _ := b.sched.LeaseCounters(); return x + y }()
	rounds(t, a, b)
	requireSpread(t, n, a, b)
	takenAfter := func() int64 { x, _ := a.sched.LeaseCounters(); y, _ := b.sched.LeaseCounters(); return x + y }()
	require.EqualValues(t, len(cParts), takenAfter-takenBefore, "C's partitions count as taken over")
	// C wakes up: its next round finds its leases gone and counts them lost.
	require.NoError(t, c.sched.LeaseRound())
	require.Empty(t, c.sched.HeldPartitions())
	_, lost := c.sched.LeaseCounters()
	require.EqualValues(t, len(cParts), lost)
	rounds(t, a, b, c)
	requireSpread(t, n, a, b, c)

	// An admin configured with another partition count holds nothing.
	e := setup(t, bundleOpts{shareDB: a, partitions: n + 1})
	rounds(t, e)
	require.Empty(t, e.sched.HeldPartitions())
	require.Positive(t, e.logLines.count("different xxl.admin.cluster.partitions"))
}

// Three partitioned admins and one lock-mode admin scan one database concurrently,
// second after second: every planned second of every job is fired exactly once; each
// partitioned admin fires only jobs of its own partitions.
func TestPartitionedAdminsFireOnceBesideLockMode(t *testing.T) {
	t.Parallel()
	const n = 8
	a := setup(t, bundleOpts{partitions: n})
	b := setup(t, bundleOpts{shareDB: a, partitions: n})
	c := setup(t, bundleOpts{shareDB: a, partitions: n})
	lock := setup(t, bundleOpts{shareDB: a})
	rounds(t, a, b, c)
	requireSpread(t, n, a, b, c)
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "partitioned", ex.Address())
	const jobs = 40
	first := t0.Add(time.Second)
	var ids []int
	for range jobs {
		ids = append(ids, a.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, first.UnixMilli()
		}))
	}
	admins := []*testBundle{a, b, c, lock}
	run := func(lockToo bool) {
		ctx := context.Background()
		for r := 0; r < 8; r++ {
			now := t0.Add(time.Duration(r) * time.Second)
			var wg sync.WaitGroup
			for i, x := range admins {
				if i == 3 && !lockToo {
					continue
				}
				x.clock.Set(now)
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := x.sched.ScanOnce(ctx)
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			for _, x := range admins {
				x.sched.RingTick(now)
			}
			for _, x := range admins {
				x.idle(t) // the pools keep up: each second's fires go out within their second
			}
			rounds(t, a, b, c) // leases stay fresh (renewed in real time)
		}
	}
	run(false)
	// Each partitioned admin's fires so far are jobs of its own partitions.
	for _, x := range []*testBundle{a, b, c} {
		held := x.sched.HeldPartitions()
		for _, id := range ids {
			if slices.Contains(held, id%n) {
				continue
			}
			for _, l := range a.logs(t, id) {
				require.NotEqual(t, x.sched.Instance(), claimOwner(l.TriggerMsg), "job %d of partition %d fired by an admin holding %v", id, id%n, held)
			}
		}
	}
	// Now with the lock-mode admin scanning beside them, from t0+8 s.
	for i := range admins {
		admins[i].clock.Set(t0.Add(8 * time.Second))
	}
	shift := func() {
		ctx := context.Background()
		for r := 8; r < 16; r++ {
			now := t0.Add(time.Duration(r) * time.Second)
			var wg sync.WaitGroup
			for _, x := range admins {
				x.clock.Set(now)
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := x.sched.ScanOnce(ctx)
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			for _, x := range admins {
				x.sched.RingTick(now)
			}
			for _, x := range admins {
				x.idle(t) // the pools keep up: each second's fires go out within their second
			}
			rounds(t, a, b, c)
		}
	}
	shift()
	for s := 16; s < 30; s++ { // let the rings run dry
		for _, x := range admins {
			x.sched.RingTick(t0.Add(time.Duration(s) * time.Second))
		}
	}
	total := 0
	for _, x := range admins {
		require.Zero(t, x.sched.RingSize())
		x.idle(t)
	}
	for _, id := range ids {
		last := time.UnixMilli(a.loadJob(t, id).TriggerLastTime)
		want := int(last.Sub(first)/time.Second) + 1
		require.Greater(t, want, 12)
		logs := a.logs(t, id)
		require.Len(t, logs, want, "job %d: one fire per planned second up to %v", id, last)
		total += want
	}
	require.Len(t, ex.Triggers(), total)
	var sum int64
	for i, x := range admins {
		st := x.sched.Stats()
		sum += st.TriggersOK
		t.Logf("admin %d fired %d", i, st.TriggersOK)
	}
	require.EqualValues(t, total, sum)
}

// claimOwner is the admin instance a claim marker names ("" for other messages).
func claimOwner(msg string) string {
	rest, ok := cutPrefix(msg, schema.ClaimPrefix)
	if !ok {
		return ""
	}
	for i := range len(rest) {
		if rest[i] == ':' {
			return rest[:i]
		}
	}
	return rest
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// Admin A holds half the partitions, reads their fires ahead (claims) and stops dead.
// B takes A's leases over once they expire and A's claims once A's heartbeat is old:
// no claim is left open, no job fires more often than planned, and A's jobs fire
// from the takeover on (the seconds A missed catch up as one fire, the misfire rule).
// When A wakes up it sends nothing, and its scan finds its leases gone and reads no
// job.
func TestPartitionTakeoverWithClaimedFires(t *testing.T) {
	t.Parallel()
	const n = 4
	a := setup(t, bundleOpts{partitions: n})
	b := setup(t, bundleOpts{shareDB: a, partitions: n})
	rounds(t, a, b)
	requireSpread(t, n, a, b)
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "takeover", ex.Address())
	first := t0.Add(time.Second)
	var ids []int
	for range 12 {
		ids = append(ids, a.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, first.UnixMilli()
		}))
	}
	ctx := context.Background()
	scanTick := func(x *testBundle, now time.Time) {
		x.clock.Set(now)
		_, err := x.sched.ScanOnce(ctx)
		require.NoError(t, err)
		x.sched.RingTick(now)
		x.idle(t) // the pools keep up: each second's fires go out within their second
	}
	scanTick(a, t0)
	scanTick(b, t0)
	aParts := a.sched.HeldPartitions()
	require.Positive(t, a.sched.RingSize(), "A read its partitions' fires ahead")
	// A stops. B goes on; 4 s later A's leases and heartbeat are old.
	for s := 1; s <= 3; s++ {
		scanTick(b, t0.Add(time.Duration(s)*time.Second))
	}
	expire(t, a, a.sched.LeaseInstance())
	rounds(t, b)
	require.Len(t, b.sched.HeldPartitions(), n, "B holds every partition")
	for s := 4; s <= 9; s++ {
		scanTick(b, t0.Add(time.Duration(s)*time.Second))
	}
	// A wakes up: its ring's fires were taken over, its leases moved on.
	b.idle(t)
	sentBefore := len(ex.Triggers())
	a.clock.Set(t0.Add(time.Second))
	a.sched.RingTick(t0.Add(time.Second))
	a.idle(t)
	a.clock.Set(t0.Add(9 * time.Second))
	_, err := a.sched.ScanOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, a.sched.RingSize(), "a stale owner reads nothing ahead")
	require.Empty(t, a.sched.HeldPartitions(), "the scan's fence dropped the leases that moved on")
	_, lost := a.sched.LeaseCounters()
	require.EqualValues(t, len(aParts), lost)
	require.Len(t, ex.Triggers(), sentBefore, "A sent nothing after it woke up")
	for s := 10; s < 20; s++ {
		b.sched.RingTick(t0.Add(time.Duration(s) * time.Second))
	}
	b.idle(t)
	for _, id := range ids {
		last := time.UnixMilli(a.loadJob(t, id).TriggerLastTime)
		logs := a.logs(t, id)
		sent := 0
		for _, l := range logs {
			require.NotZero(t, l.TriggerCode, "job %d: log %d left open", id, l.ID)
			if l.TriggerCode == 200 {
				sent++
			}
		}
		// B caught up on A's partitions with one fire for the seconds A missed (A's
		// claim merged into it): a job of A's fires at most once per planned second,
		// and on from the takeover.
		require.LessOrEqual(t, sent, int(last.Sub(first)/time.Second)+1, "job %d fired more often than planned", id)
		require.GreaterOrEqual(t, sent, 7, "job %d: fired at least from the takeover (t0+4 s) to the last scan's read-ahead (t0+10 s)", id)
	}
}

// An admin whose lease rounds have not gone through within the lease time sends
// nothing, not even fires it took over, until a round confirms its standing: it may
// have been cut off while the others moved its partitions and claims on.
func TestPartitionedAdminWithoutFreshLeasesHoldsFires(t *testing.T) {
	t.Parallel()
	const n = 4
	a := setup(t, bundleOpts{partitions: n})
	b := setup(t, bundleOpts{shareDB: a, partitions: n}) // no lease round yet
	rounds(t, a)
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "fresh", ex.Address())
	for range 4 {
		a.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "0 0 0 * * ?", 1, t0.Add(4*time.Second).UnixMilli()
		})
	}
	ctx := context.Background()
	_, err := a.sched.ScanOnce(ctx) // A claims the fires of t0+4 s, then stops
	require.NoError(t, err)
	require.Equal(t, 4, a.sched.RingSize())
	b.clock.Set(t0.Add(4 * time.Second))
	_, err = b.sched.ScanOnce(ctx) // B takes A's claims over: due now, but held
	require.NoError(t, err)
	b.sched.RingTick(t0.Add(4 * time.Second))
	b.idle(t)
	require.Empty(t, ex.Triggers(), "sent without a lease round within the lease time")
	require.NoError(t, b.sched.LeaseRound())
	b.sched.RingTick(t0.Add(4 * time.Second))
	b.idle(t)
	require.Len(t, ex.Triggers(), 4, "sent once a round went through")
}
