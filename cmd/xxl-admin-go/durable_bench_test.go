package main

import (
	"context"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// BenchmarkManualTriggerAnswer times the console's "run once" (POST
// /jobinfo/trigger) from 40 clients at once against an executor that holds every /run
// reply 2.5 s: the answer comes once the trigger is written (the claim row and its
// parameters, one transaction), not after the executor. It reports the answer's
// p50, p99 and max in ms over all calls (run it with -benchtime=1000x).
//
//	go test -run '^$' -bench BenchmarkManualTriggerAnswer -benchtime=1000x ./cmd/xxl-admin-go/
func BenchmarkManualTriggerAnswer(b *testing.B) {
	db, store := schematest.New(b, schema.Layout34)
	ex := executortest.Start(b, executortest.Config{Kind: executortest.KindJava342, AccessToken: "e2e-token"})
	ex.Handle("slow", executortest.Behavior{ReplyDelay: 2500 * time.Millisecond, NoCallback: true})
	admin := runAdmin(b, []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
	})
	ctx := context.Background()
	g, err := store.InsertGroup(ctx, schema.Group{AppName: "bench", Title: "bench", AddressType: 1, AddressList: ex.Address()})
	require.NoError(b, err)
	now := time.Now()
	job, err := store.InsertJob(ctx, schema.Job{JobGroup: g, JobDesc: "slow", AddTime: now, UpdateTime: now, Author: "b",
		ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "slow",
		ExecutorBlockStrategy: "CONCURRENT_EXECUTION", GlueType: "BEAN", GlueRemark: "init", GlueUpdatetime: now})
	require.NoError(b, err)
	c := consoleLogin(b, admin)
	c.hc.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	form := url.Values{"id": {strconv.Itoa(job)}, "executorParam": {""}, "addressList": {""}}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(max(1, 40/runtime.GOMAXPROCS(0))) // 40 clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			status, env := c.post(b, "/jobinfo/trigger", form)
			d := time.Since(start)
			if status != http.StatusOK || env.Code != 200 {
				b.Errorf("trigger answered %d %d %s", status, env.Code, env.Msg)
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	b.StopTimer()
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
	require.Equal(b, b.N, db.Count(b, "xxl_job_log", "job_id = ?", job), "every answered trigger is written")
}
