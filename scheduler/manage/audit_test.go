package manage_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// lastAudit reads the newest audit entry and its changes by field.
func (b *testBundle) lastAudit(t *testing.T) (schema.AuditEntry, map[string]manage.FieldChange) {
	t.Helper()
	es, _, err := b.store.ListAudit(context.Background(), schema.AuditFilter{}, 0, 1)
	require.NoError(t, err)
	require.NotEmpty(t, es, "an audit entry was written")
	fields := map[string]manage.FieldChange{}
	if es[0].Changes != "" {
		var fcs []manage.FieldChange
		require.NoError(t, json.Unmarshal([]byte(es[0].Changes), &fcs))
		for _, f := range fcs {
			fields[f.Field] = f
		}
	}
	return es[0], fields
}

func (b *testBundle) auditCount(t *testing.T) int {
	t.Helper()
	_, n, err := b.store.ListAudit(context.Background(), schema.AuditFilter{}, 0, 0)
	require.NoError(t, err)
	return n
}

func str(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// requireField checks one recorded field: nil stands for an absent side.
func requireField(t *testing.T, fields map[string]manage.FieldChange, name string, before, after any) {
	t.Helper()
	f, ok := fields[name]
	require.True(t, ok, "field %s recorded; have %v", name, fields)
	require.Equal(t, before, str(f.Before), "%s before", name)
	require.Equal(t, after, str(f.After), "%s after", name)
}

// Every kind of change the console's rules make is recorded with who, when, from
// where and the changed fields; secrets are masked, GLUE sources digested, unchanged
// fields left out.
func TestAuditRecordsEveryChange(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := manage.WithClient(context.Background(), "192.0.2.7")
	expect := func(action, kind, id string) map[string]manage.FieldChange {
		t.Helper()
		e, fields := b.lastAudit(t)
		require.Equal(t, action, e.Action)
		require.Equal(t, kind, e.TargetKind)
		require.Equal(t, id, e.TargetID)
		require.Equal(t, "admin", e.Actor)
		require.Equal(t, manage.ActorUser, e.ActorKind)
		require.Equal(t, "192.0.2.7", e.Client)
		require.Equal(t, manage.OutcomeOK, e.Outcome)
		require.Equal(t, t0.UnixMilli(), e.Time)
		return fields
	}

	in := manage.JobInput{JobGroup: 1, JobDesc: "nightly", Author: "ops", ScheduleType: "CRON", ScheduleConf: "0 0 1 * * ?",
		ExecutorHandler: "demoJobHandler", GlueType: "BEAN", GlueRemark: "init"}
	id, err := b.svc.AddJob(ctx, b.admin, in)
	require.NoError(t, err)
	jid := strconv.Itoa(id)
	f := expect(manage.ActionJobAdd, manage.TargetJob, jid)
	requireField(t, f, "jobDesc", nil, "nightly")
	requireField(t, f, "id", nil, jid)
	require.NotContains(t, f, "addTime", "times the system keeps are left out")

	in.ID, in.JobDesc, in.ScheduleConf = id, "nightly run", "0 0 2 * * ?"
	require.NoError(t, b.svc.UpdateJob(ctx, b.admin, in))
	f = expect(manage.ActionJobUpdate, manage.TargetJob, jid)
	requireField(t, f, "jobDesc", "nightly", "nightly run")
	requireField(t, f, "scheduleConf", "0 0 1 * * ?", "0 0 2 * * ?")
	require.Len(t, f, 2, "only the changed fields: %v", f)

	require.NoError(t, b.svc.StartJob(ctx, b.admin, id))
	requireField(t, expect(manage.ActionJobStart, manage.TargetJob, jid), "triggerStatus", "0", "1")
	require.NoError(t, b.svc.StopJob(ctx, b.admin, id))
	requireField(t, expect(manage.ActionJobStop, manage.TargetJob, jid), "triggerStatus", "1", "0")

	require.NoError(t, b.svc.SaveGlue(ctx, b.admin, manage.GlueInput{JobID: id, Source: "echo secret=hunter2\n", Remark: "first version"}))
	f = expect(manage.ActionGlueSave, manage.TargetJob, jid)
	requireField(t, f, "glueSource", "", manage.Digest("echo secret=hunter2\n"))
	requireField(t, f, "glueRemark", "init", "first version")
	e, _ := b.lastAudit(t)
	require.NotContains(t, e.Changes, "hunter2", "GLUE sources are digested, never stored")

	n, err := b.svc.ClearLogs(ctx, b.admin, 1, id, 9)
	require.NoError(t, err)
	require.Zero(t, n)
	requireField(t, expect(manage.ActionLogClear, manage.TargetLog, ""), "type", nil, "9")

	require.NoError(t, b.svc.RemoveJob(ctx, b.admin, id))
	requireField(t, expect(manage.ActionJobRemove, manage.TargetJob, jid), "jobDesc", "nightly run", nil)
	before := b.auditCount(t)
	require.NoError(t, b.svc.RemoveJob(ctx, b.admin, id), "an unknown id is success")
	require.Equal(t, before, b.auditCount(t), "and records nothing: nothing changed")

	gid, err := b.svc.AddGroup(ctx, b.admin, manage.GroupInput{AppName: "audit-app", Title: "Audit", AddressType: 1, AddressList: "http://10.0.0.1:9999"})
	require.NoError(t, err)
	gs := strconv.Itoa(gid)
	requireField(t, expect(manage.ActionGroupAdd, manage.TargetGroup, gs), "appName", nil, "audit-app")
	require.NoError(t, b.svc.UpdateGroup(ctx, b.admin, manage.GroupInput{ID: gid, AppName: "audit-app", Title: "Audit 2", AddressType: 1, AddressList: "http://10.0.0.1:9999"}))
	f = expect(manage.ActionGroupUpdate, manage.TargetGroup, gs)
	requireField(t, f, "title", "Audit", "Audit 2")
	require.Len(t, f, 1, "%v", f)
	require.NoError(t, b.svc.RemoveGroup(ctx, b.admin, gid))
	requireField(t, expect(manage.ActionGroupRemove, manage.TargetGroup, gs), "title", "Audit 2", nil)

	uid, err := b.svc.AddUser(ctx, b.admin, manage.UserInput{Username: "auditee", Password: "pass1234", Role: 0, Permission: "1"})
	require.NoError(t, err)
	us := strconv.Itoa(uid)
	f = expect(manage.ActionUserAdd, manage.TargetUser, us)
	requireField(t, f, "username", nil, "auditee")
	requireField(t, f, "password", nil, manage.Masked)
	require.NoError(t, b.svc.UpdateUser(ctx, b.admin, manage.UserInput{ID: uid, Password: "other123", Role: 1}))
	f = expect(manage.ActionUserUpdate, manage.TargetUser, us)
	requireField(t, f, "password", manage.Masked, manage.Masked)
	requireField(t, f, "role", "0", "1")
	requireField(t, f, "permission", "1", "")
	e, _ = b.lastAudit(t)
	require.NotContains(t, e.Changes, manage.HashPassword(b.store.Layout(), "other123"), "no password hash is recorded")
	require.NoError(t, b.svc.RemoveUser(ctx, b.admin, uid))
	requireField(t, expect(manage.ActionUserRemove, manage.TargetUser, us), "username", "auditee", nil)

	require.NoError(t, b.svc.ChangePassword(ctx, b.admin, "123456", "654321"))
	requireField(t, expect(manage.ActionUserPassword, manage.TargetUser, "1"), "password", manage.Masked, manage.Masked)
}

// Sign-ins are recorded under the user, failed ones under the name tried, never with
// the password; attempts refused by the limit are not recorded (a flood would fill the
// table).
func TestAuditSignIns(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24, i18n.En, false)
	ctx := context.Background()
	_, err := b.svc.Login(ctx, "nobody", "guess-pw", "198.51.100.4")
	require.True(t, manage.IsKind(err, manage.Invalid))
	e, _ := b.lastAudit(t)
	require.Equal(t, schema.AuditEntry{ID: e.ID, Time: t0.UnixMilli(), Actor: "nobody", ActorKind: manage.ActorAnonymous,
		Client: "198.51.100.4", Action: manage.ActionSignInFailed, TargetKind: manage.TargetUser, Outcome: manage.OutcomeFailed}, e)
	_, err = b.svc.Login(ctx, "admin", "wrong-pw", "198.51.100.4")
	require.True(t, manage.IsKind(err, manage.Invalid))
	e, _ = b.lastAudit(t)
	require.Equal(t, "1", e.TargetID, "an existing user is named by id")
	require.NotContains(t, e.Changes, "wrong-pw")

	u, err := b.svc.Login(ctx, "admin", "123456", "198.51.100.4")
	require.NoError(t, err)
	_, _, err = b.svc.NewIdentity(manage.WithClient(ctx, "198.51.100.4"), u, true)
	require.NoError(t, err)
	e, f := b.lastAudit(t)
	require.Equal(t, manage.ActionSignIn, e.Action)
	require.Equal(t, "admin", e.Actor)
	require.Equal(t, "198.51.100.4", e.Client)
	requireField(t, f, "session", nil, "identity")
	requireField(t, f, "remember", nil, "true")

	for range 10 {
		_, _ = b.svc.Login(ctx, "admin", "bad-pw", "198.51.100.5")
	}
	n := b.auditCount(t)
	_, err = b.svc.Login(ctx, "admin", "bad-pw", "198.51.100.5")
	require.True(t, manage.IsKind(err, manage.Limited))
	require.Equal(t, n, b.auditCount(t), "a refused attempt is not recorded")
}

// The job OpenAPI's principal is recorded as the access token that authorised it; a
// principal may name its own actor (API tokens).
func TestAuditActors(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := context.Background()
	p, err := b.svc.APIPrincipal(ctx, "")
	require.NoError(t, err)
	require.NoError(t, b.svc.StopJob(ctx, p, 1))
	e, _ := b.lastAudit(t)
	require.Equal(t, manage.ActorAccessToken, e.ActorKind)
	require.Equal(t, "xxl.job.accessToken", e.Actor)

	p, err = b.svc.APIPrincipal(ctx, "xxl-job-executor-sample")
	require.NoError(t, err)
	require.NoError(t, b.svc.StopJob(ctx, p, 1))
	e, _ = b.lastAudit(t)
	require.Equal(t, "group token of xxl-job-executor-sample", e.Actor)

	tok := b.admin.WithActor(manage.Actor{Kind: manage.ActorAPIToken, Name: "deploy-bot"})
	require.NoError(t, b.svc.StopJob(ctx, tok, 1))
	e, _ = b.lastAudit(t)
	require.Equal(t, manage.ActorAPIToken, e.ActorKind)
	require.Equal(t, "deploy-bot", e.Actor)
}

// Denied attempts are recorded sparingly: one per actor, action and target a minute,
// at most 10 per actor a minute; other outcomes are all recorded, and the next minute
// starts afresh.
func TestAuditBoundsDeniedAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := context.Background()
	bot := manage.Actor{Kind: manage.ActorAPIToken, Name: "token:7:bot"}
	denied := func(action, target string) manage.Change {
		return manage.Change{Action: action, TargetKind: manage.TargetJob, TargetID: target, Outcome: manage.OutcomeDenied}
	}
	count := func(where string, args ...any) int { return b.db.Count(t, schema.AuditTable, where, args...) }

	for range 50 {
		b.svc.RecordAs(ctx, bot, denied(manage.ActionJobStop, "1"))
	}
	require.Equal(t, 1, count("outcome = 'denied'"), "one per actor, action and target")
	b.svc.RecordAs(ctx, bot, denied(manage.ActionJobStart, "1"))
	require.Equal(t, 2, count("outcome = 'denied'"), "another action is another entry")
	for i := range 50 {
		b.svc.RecordAs(ctx, bot, denied(manage.ActionJobStop, strconv.Itoa(100+i)))
	}
	require.Equal(t, 10, count("outcome = 'denied' AND actor = ?", bot.Name), "at most 10 per actor a minute")
	other := manage.Actor{Kind: manage.ActorAPIToken, Name: "token:8:other"}
	b.svc.RecordAs(ctx, other, denied(manage.ActionJobStop, "1"))
	require.Equal(t, 1, count("actor = ?", other.Name), "another actor has its own count")
	for range 20 {
		b.svc.RecordAs(ctx, bot, manage.Change{Action: manage.ActionJobStop, TargetKind: manage.TargetJob, TargetID: "1"})
	}
	require.Equal(t, 20, count("outcome = 'ok' AND actor = ?", bot.Name), "changes made are all recorded")

	b.clk.Advance(time.Minute)
	b.svc.RecordAs(ctx, bot, denied(manage.ActionJobStop, "1"))
	b.svc.RecordAs(ctx, bot, denied(manage.ActionJobStop, "1"))
	require.Equal(t, 11, count("outcome = 'denied' AND actor = ?", bot.Name), "a new minute")
}

// Inside a transaction an entry is written once it commits, and not at all when it
// rolls back; a failed write never fails the change and goes to the log instead.
func TestAuditTransactionsAndFailures(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := context.Background()
	c := manage.Change{Action: manage.ActionTokenCreate, TargetKind: manage.TargetToken, TargetID: "t1"}
	boom := errors.New("boom")
	err := b.store.InTx(ctx, func(ctx context.Context) error {
		b.svc.Record(ctx, b.admin, c)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Zero(t, b.auditCount(t), "a rolled-back change leaves no entry")
	require.NoError(t, b.store.InTx(ctx, func(ctx context.Context) error {
		b.svc.Record(ctx, b.admin, c)
		require.Zero(t, b.auditCount(t), "not before the commit")
		return nil
	}))
	e, _ := b.lastAudit(t)
	require.Equal(t, manage.ActionTokenCreate, e.Action)

	b.db.Exec(t, "DROP TABLE "+schema.AuditTable)
	require.NoError(t, b.svc.StopJob(ctx, b.admin, 1), "the change is made although its entry cannot be written")
	ok, failed := b.svc.AuditWrites()
	require.EqualValues(t, 1, ok)
	require.EqualValues(t, 1, failed)
	b.svc.PrepareAudit(ctx)
	require.NoError(t, b.svc.StopJob(ctx, b.admin, 1))
	require.Equal(t, 1, b.auditCount(t), "PrepareAudit created the table again")
}

// Only administrators read the audit log; the filters apply.
func TestListAudit(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := context.Background()
	require.NoError(t, b.svc.StopJob(ctx, b.admin, 1))
	require.NoError(t, b.svc.StartJob(ctx, b.admin, 1))
	_, _, err := b.svc.ListAudit(ctx, manage.PrincipalFor(schema.User{ID: 5, Permission: "1"}), manage.AuditQuery{}, 0, 10)
	require.True(t, manage.IsKind(err, manage.Denied))
	es, n, err := b.svc.ListAudit(ctx, b.admin, manage.AuditQuery{Action: manage.ActionJobStop, From: t0, To: t0}, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, manage.ActionJobStop, es[0].Action)
	_, n, err = b.svc.ListAudit(ctx, b.admin, manage.AuditQuery{From: t0.Add(time.Millisecond)}, 0, 10)
	require.NoError(t, err)
	require.Zero(t, n)
}

// Diff works on any struct: slices and maps are compared and shown as JSON, pointers
// are followed, unexported fields left out.
func TestDiffShapes(t *testing.T) {
	t.Parallel()
	type row struct {
		ID     int
		Groups []int
		Tags   map[string]int
		At     time.Time
		secret string
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := row{ID: 7, Groups: []int{1, 2}, Tags: map[string]int{"a": 1}, At: at, secret: "x"}
	a := b
	a.Groups, a.At, a.secret = []int{1, 3}, at.In(mustZone("Asia/Shanghai")), "y"
	got := manage.Diff(&b, a, nil)
	require.Len(t, got, 1, "the same instant in another zone is no change: %+v", got)
	require.Equal(t, "groups", got[0].Field)
	require.Equal(t, "[1,2]", *got[0].Before)
	require.Equal(t, "[1,3]", *got[0].After)
	created := manage.Diff(nil, &b, nil)
	require.Equal(t, []string{"id", "groups", "tags", "at"}, fieldNames(created))
	require.Equal(t, "2026-01-02 03:04:05", *created[3].After)
	require.Nil(t, manage.Diff(nil, nil, nil))
	require.Nil(t, manage.Diff((*row)(nil), 3, nil), "no struct, no fields")
}

func fieldNames(fs []manage.FieldChange) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Field)
	}
	return out
}
