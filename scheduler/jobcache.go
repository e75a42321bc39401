package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// jobCache keeps job rows between ring ticks, so a tick that fires thousands of jobs
// does not read every one of them again. It stays correct under console edits made on
// any admin — this one, another Go admin, a Java admin — because every edit path stamps
// update_time (jobinfo add/update, start, stop, GLUE save: upstream and here). Before
// each use the cache reads the table's state (schema.JobTableState): a job whose
// update_time is not the cached row's is read again, and a change in the number of
// jobs or the sum of their ids (a delete) empties the cache. A row stamped less than
// jobCacheSkew before it was read is not kept: a second edit in the same second would
// carry the same stamp. Writes that do not stamp update_time (a DBA's own UPDATE) are
// seen after at most jobCacheMaxAge.
const (
	// jobCacheWindow is how far back each check looks for stamped changes.
	jobCacheWindow = time.Minute
	// jobCacheSkew is the clock difference between admins (and the DATETIME
	// truncation) the stamps may carry.
	jobCacheSkew = 10 * time.Second
	// jobCacheMaxAge bounds how long a row is used without reading it again.
	jobCacheMaxAge = time.Minute
)

type jobCache struct {
	mu           sync.Mutex
	jobs         map[int]cachedJob
	count, idSum int64
	checked      time.Time
	hits, reads  int64 // for tests and metrics
}

type cachedJob struct {
	job    schema.Job
	loaded time.Time
}

// load returns the jobs among ids (missing ones are absent), from the cache where it
// may. now is the scheduler clock before any read.
func (c *jobCache) load(ctx context.Context, store *schema.Store, now time.Time, ids []int) (map[int]schema.Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The check reads two columns of every job; reading the firing jobs reads one row
	// each. The cache pays off only when a tick fires a good share of all jobs.
	if c.count > 0 && int64(len(ids))*4 < c.count {
		return store.LoadJobs(ctx, ids)
	}
	st, err := store.JobTableState(ctx, now.Add(-jobCacheWindow))
	if err != nil {
		return nil, err
	}
	if c.jobs == nil || st.Count != c.count || st.IDSum != c.idSum || now.Sub(c.checked) > jobCacheWindow-jobCacheSkew || now.Before(c.checked) {
		c.jobs = map[int]cachedJob{}
	}
	c.count, c.idSum, c.checked = st.Count, st.IDSum, now
	out := make(map[int]schema.Job, len(ids))
	var miss []int
	for _, id := range ids {
		e, ok := c.jobs[id]
		if ok {
			if t, changed := st.Updated[id]; changed && !t.Equal(e.job.UpdateTime) {
				ok = false
			}
			if now.Sub(e.loaded) > jobCacheMaxAge {
				ok = false
			}
		}
		if ok {
			out[id] = e.job
			c.hits++
			continue
		}
		delete(c.jobs, id)
		miss = append(miss, id)
	}
	if len(miss) == 0 {
		return out, nil
	}
	got, err := store.LoadJobs(ctx, miss)
	if err != nil {
		return nil, err
	}
	c.reads += int64(len(got))
	for id, j := range got {
		out[id] = j
		if now.Sub(j.UpdateTime) > jobCacheSkew {
			c.jobs[id] = cachedJob{job: j, loaded: now}
		}
	}
	return out, nil
}
