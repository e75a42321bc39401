package manage_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// wfBundle is a workflow service on one database: groups 1 (the member's) and 2,
// a job in each.
type wfBundle struct {
	store          *schema.Store
	svc            *manage.Service
	admin, member  manage.Principal
	jobMine, jobB  int
	groupA, groupB int
}

func setupWorkflows(t testing.TB, kind string) *wfBundle {
	t.Helper()
	ctx := context.Background()
	var store *schema.Store
	var loc *time.Location
	switch kind {
	case "mysql":
		db, st := schematest.New(t, schema.Layout34)
		store, loc = st, db.Loc
	case "postgres":
		p, st := schematest.NewPostgres(t)
		store, loc = st, p.Loc
	case "sqlite":
		l := schematest.NewSQLite(t)
		store, loc = l.Store, l.Loc
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clk := clock.NewFake(t0)
	sched := scheduler.New(scheduler.Config{Location: loc, Logger: log}, store, nil, clk)
	t.Cleanup(func() { sched.Stop(ctx) })
	eng := workflow.New(workflow.Config{Store: store, Scheduler: sched, Clock: clk, Location: loc, Logger: log})
	svc := manage.New(manage.Config{Store: store, Scheduler: sched, Clock: clk, Location: loc, Logger: log, Workflows: eng})
	admin, err := store.LoadUser(ctx, 1)
	require.NoError(t, err)
	b := &wfBundle{store: store, svc: svc, admin: manage.PrincipalFor(admin)}
	for i, g := range []*int{&b.groupA, &b.groupB} {
		*g, err = store.InsertGroup(ctx, schema.Group{AppName: "wf-" + strconv.Itoa(i), Title: "wf", AddressType: 1, UpdateTime: t0})
		require.NoError(t, err)
	}
	b.member = manage.PrincipalFor(schema.User{Username: "member", Permission: strconv.Itoa(b.groupA)})
	job := func(group int) int {
		id, err := store.InsertJob(ctx, schema.Job{JobGroup: group, JobDesc: "j", Author: "t", ScheduleType: "NONE",
			MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "h", ExecutorBlockStrategy: "SERIAL_EXECUTION",
			GlueType: "BEAN", GlueUpdatetime: t0, AddTime: t0, UpdateTime: t0})
		require.NoError(t, err)
		return id
	}
	b.jobMine, b.jobB = job(b.groupA), job(b.groupB)
	return b
}

// bytesAllocated is what f allocates, as the runtime counts it (the whole process:
// run it where no other test runs).
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A member's page of one workflow allocates what that page holds, however many
// workflows of other groups are stored and however big their graphs: the list is
// filtered by group in SQL and reads no graph but the page's. Forty workflows of
// group B with 200 kB graphs each (8 MB) are stored; the member's and an
// administrator's one-row pages each allocate under 1 MiB. On every database; not
// parallel, since the runtime counts the whole process's allocations.
func TestWorkflowListMemoryBounded(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			b := setupWorkflows(t, kind)
			ctx := context.Background()
			big := `{"nodes":[{"name":"a","jobId":` + strconv.Itoa(b.jobB) + `,"param":"` + strings.Repeat("x", 200<<10) + `"}],"edges":[]}`
			for i := range 40 {
				_, err := b.store.InsertWorkflow(ctx, schema.Workflow{Name: "theirs-" + strconv.Itoa(i), Graph: big, Groups: []int{b.groupB},
					ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
				require.NoError(t, err)
			}
			mine, err := b.svc.SaveWorkflow(ctx, b.member, workflow.Definition{Name: "mine",
				Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "a", JobID: b.jobMine}}}})
			require.NoError(t, err)
			for _, extra := range []string{"early", "late"} { // newer than mine: the page is cut after the filter
				_, err := b.store.InsertWorkflow(ctx, schema.Workflow{Name: extra, Graph: big, Groups: []int{b.groupB},
					ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
				require.NoError(t, err)
			}
			for _, c := range []struct {
				who   string
				p     manage.Principal
				total int
			}{{"member", b.member, 1}, {"administrator", b.admin, 43}} {
				var ws []schema.Workflow
				var total int
				n := bytesAllocated(func() {
					ws, total, err = b.svc.ListWorkflows(ctx, c.p, "", 0, 1)
				})
				require.NoError(t, err)
				require.Equal(t, c.total, total, c.who)
				require.Len(t, ws, 1, c.who)
				if c.who == "member" {
					require.Equal(t, mine, ws[0].ID)
				}
				t.Logf("%s: a one-row page allocated %d bytes", c.who, n)
				require.Less(t, n, uint64(1<<20), "%s: a one-row page allocated %d bytes", c.who, n)
			}
		})
	}
}

// BenchmarkMemberWorkflowList measures a member's one-row workflow page beside 40
// workflows of another group with 200 kB graphs (B/op), on MariaDB.
func BenchmarkMemberWorkflowList(bm *testing.B) {
	b := setupWorkflows(bm, "mysql")
	ctx := context.Background()
	big := `{"nodes":[{"name":"a","jobId":` + strconv.Itoa(b.jobB) + `,"param":"` + strings.Repeat("x", 200<<10) + `"}]}`
	for i := range 40 {
		_, err := b.store.InsertWorkflow(ctx, schema.Workflow{Name: "theirs-" + strconv.Itoa(i), Graph: big, Groups: []int{b.groupB},
			ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
		require.NoError(bm, err)
	}
	_, err := b.svc.SaveWorkflow(ctx, b.member, workflow.Definition{Name: "mine",
		Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "a", JobID: b.jobMine}}}})
	require.NoError(bm, err)
	bm.ReportAllocs()
	for bm.Loop() {
		if _, _, err := b.svc.ListWorkflows(ctx, b.member, "", 0, 1); err != nil {
			bm.Fatal(err)
		}
	}
}
