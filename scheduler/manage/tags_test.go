package manage_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Tags are normalised on save; where xxl_admin_job_option is missing, a job without
// tags saves as before and one with tags is refused, naming the table and the way to
// add it.
func TestJobTags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, schema.Layout34, i18n.En, false)
	tags := []string{"Nightly", " billing", "nightly"}
	in := manage.JobInput{JobGroup: 1, JobDesc: "tagged", Author: "ops", ScheduleType: "NONE", ExecutorHandler: "h", GlueType: "BEAN", Tags: &tags}
	id, err := b.svc.AddJob(ctx, b.admin, in)
	require.NoError(t, err)
	j, err := b.store.LoadJob(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []string{"billing", "nightly"}, j.Tags)

	b.db.Exec(t, "DROP TABLE "+schema.JobOptionTable)
	ok, err := b.store.HasJobOptionTable(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = b.svc.AddJob(ctx, b.admin, in)
	require.True(t, manage.IsKind(err, manage.Invalid), "%v", err)
	require.EqualError(t, err, "Table xxl_admin_job_option is missing, so a job cannot have tags; add it with `xxl-admin-go schema upgrade`")
	in.Tags = nil
	_, err = b.svc.AddJob(ctx, b.admin, in)
	require.NoError(t, err, "a job without tags saves as upstream's")
}
