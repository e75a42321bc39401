package adminapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/routes/openapi"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// jobAPIBundle is an admin on a fresh database (MariaDB or an embedded SQLite file)
// with a stub executor that accepts every trigger.
type jobAPIBundle struct {
	db    *schematest.DB
	store *schema.Store
	base  string // the admin's URL with its context path
	exec  string // the stub executor's address
	logs  *lockedBuffer
}

// apiReply is the envelope the job OpenAPI answers with.
type apiReply struct {
	Code int             `json:"code"`
	Msg  *string         `json:"msg"`
	Data json.RawMessage `json:"data"`
}

func (r apiReply) msg() string {
	if r.Msg == nil {
		return ""
	}
	return *r.Msg
}

// The databases the job OpenAPI, token and audit tests run on: the MariaDB test
// server, and an embedded SQLite file as the admin runs without a datasource.
const (
	onMariaDB  = "MariaDB"
	onSQLite   = "SQLite"
	onPostgres = "PostgreSQL"
)

var jobAPIDatabases = []string{onMariaDB, onSQLite}

// onEachDatabase runs test in a parallel subtest on each of jobAPIDatabases, with what
// setup builds there.
func onEachDatabase[B any](t *testing.T, setup func(*testing.T, string) B, test func(*testing.T, B)) {
	t.Helper()
	for _, database := range jobAPIDatabases {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, database))
		})
	}
}

// setupJobAPI34On is setupJobAPIOn on a 3.4 database without a limiter.
func setupJobAPI34On(t *testing.T, database string) jobAPIBundle {
	t.Helper()
	return setupJobAPIOn(t, database, schema.Layout34, nil)
}

// setupLimitedOn is setupJobAPI34On with a limiter that lets one call through.
func setupLimitedOn(t *testing.T, database string) jobAPIBundle {
	t.Helper()
	return setupJobAPIOn(t, database, schema.Layout34, &countLimiter{n: 1})
}

// newJobAPIDB creates a database of the layout on MariaDB; "3.5" is the 3.4 DDL with
// HEAD's renamed name columns and per-group tokens.
func newJobAPIDB(t *testing.T, layout schema.LayoutName) *schematest.DB {
	t.Helper()
	if layout != schema.Layout35 {
		db, _ := schematest.New(t, layout)
		return db
	}
	db, _ := schematest.New(t, schema.Layout34)
	db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
	db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
	db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
	return db
}

// newSQLiteDB creates an embedded SQLite file with the 3.4 layout (the only one an
// embedded file has) and its seed rows, as the admin does on first start.
func newSQLiteDB(t *testing.T) *schematest.DB {
	t.Helper()
	loc, err := time.LoadLocation(schematest.Zone)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "xxl-job.db")
	db, err := schema.OpenSQLite(path, loc)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, schema.Init(context.Background(), db, schema.Layout34))
	return &schematest.DB{Name: path, SQL: db, Loc: loc}
}

// newDBOn creates a database of the layout on database (onMariaDB, onSQLite,
// onPostgres).
func newDBOn(t *testing.T, database string, layout schema.LayoutName) *schematest.DB {
	t.Helper()
	switch database {
	case onSQLite:
		require.Equal(t, schema.Layout34, layout, "an embedded file has the 3.4 layout only")
		return newSQLiteDB(t)
	case onPostgres:
		require.Equal(t, schema.Layout34, layout, "the PostgreSQL DDL has the 3.4 layout")
		p, _ := schematest.NewPostgres(t)
		return p.AsDB()
	}
	return newJobAPIDB(t, layout)
}

func setupJobAPI(t *testing.T, layout schema.LayoutName, limiter openapi.Limiter) jobAPIBundle {
	t.Helper()
	return setupJobAPIOn(t, onMariaDB, layout, limiter)
}

// setupJobAPIOn builds and serves the admin on a fresh database of the layout on
// database (onMariaDB, onSQLite).
func setupJobAPIOn(t *testing.T, database string, layout schema.LayoutName, limiter openapi.Limiter) jobAPIBundle {
	t.Helper()
	return setupJobAPIWith(t, database, layout, Options{JobAPILimiter: limiter})
}

// setupJobAPIWith is setupJobAPIOn with the job API limiter and the clock of o.
func setupJobAPIWith(t *testing.T, database string, layout schema.LayoutName, o Options) jobAPIBundle {
	t.Helper()
	db := newDBOn(t, database, layout)
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"code":200,"msg":null}`)
	}))
	t.Cleanup(stub.Close)
	// The sample group lists the stub, so triggers reach an executor.
	db.Exec(t, "UPDATE xxl_job_group SET address_type = 1, address_list = ? WHERE id = 1", stub.URL)
	cfg, err := config.Load([]string{"--xxl.job.accessToken=api-token", "--xxl.job.i18n=en"}, nil)
	require.NoError(t, err)
	logs := &lockedBuffer{}
	a, err := Build(context.Background(), Options{Config: cfg, DB: db.SQL, Location: db.Loc,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), JobAPILimiter: o.JobAPILimiter, Clock: o.Clock})
	require.NoError(t, err)
	require.Equal(t, layout, a.Layout.Name)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = a.App.Listener(ln) }()
	t.Cleanup(func() { _ = a.App.Shutdown() })
	return jobAPIBundle{db: db, store: a.Store, base: "http://" + ln.Addr().String() + cfg.ContextPath, exec: stub.URL, logs: logs}
}

// call posts body to /api/<uri> with the given headers (name, value pairs).
func (b jobAPIBundle) call(t *testing.T, uri, body string, headers ...string) apiReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+"/api/"+uri, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var r apiReply
	require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	return r
}

func (b jobAPIBundle) admin(t *testing.T, uri, body string) apiReply {
	t.Helper()
	return b.call(t, uri, body, "XXL-JOB-ACCESS-TOKEN", "api-token")
}

func (b jobAPIBundle) job(t *testing.T, id int) schema.Job {
	t.Helper()
	j, err := b.store.LoadJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

// addedID reads addJob's data: the new id as a JSON string.
func addedID(t *testing.T, r apiReply) int {
	t.Helper()
	require.Equal(t, 200, r.Code, r.msg())
	var s string
	require.NoError(t, json.Unmarshal(r.Data, &s), "data must be a string: %s", r.Data)
	id, err := strconv.Atoi(s)
	require.NoError(t, err)
	return id
}

// The bodies below carry the fields of each call as wire-protocol.md §4.5 lists them
// for HEAD 3.5.0-SNAPSHOT's job OpenAPI.
const (
	addJobBody = `{"jobGroup":1,"name":"api job","author":"ops","alarmEmail":"ops@example.com",
		"scheduleType":"CRON","scheduleConf":"0 0 3 * * ?","misfireStrategy":"DO_NOTHING",
		"executorRouteStrategy":"FIRST","executorHandler":"demoJobHandler","executorParam":"p0",
		"executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":10,"executorFailRetryCount":1,
		"glueType":"BEAN","glueSource":"","glueRemark":"GLUE init"}`
	updateJobBody = `{"id":%d,"jobGroup":999,"name":"api job v2","author":"ops2","alarmEmail":"",
		"scheduleType":"FIX_RATE","scheduleConf":"60","misfireStrategy":"FIRE_ONCE_NOW",
		"executorRouteStrategy":"ROUND","executorHandler":"otherHandler","executorParam":"p1",
		"executorBlockStrategy":"DISCARD_LATER","executorTimeout":0,"executorFailRetryCount":0,
		"glueType":"BEAN","glueSource":"","glueRemark":""}`
)

func withID(body string, id int) string { return strings.Replace(body, "%d", strconv.Itoa(id), 1) }

// addJobIn is addJobBody in executor group group.
func addJobIn(group int) string {
	return strings.Replace(addJobBody, `"jobGroup":1`, `"jobGroup":`+strconv.Itoa(group), 1)
}

// addGroupB adds executor group 2 ("app-b") listing the stub executor, on a 3.4 database.
func (b jobAPIBundle) addGroupB(t *testing.T) {
	t.Helper()
	b.db.Exec(t, `INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time)
		VALUES (2, 'app-b', 'B', 1, ?, ?)`, b.exec, time.Now())
}

// TestJobOpenAPI replays the six calls of HEAD 3.5.0's job OpenAPI (wire-protocol.md
// §4.5) over HTTP against the admin on MariaDB, on the 2.4, 3.4 and 3.5 layouts, and on
// an embedded SQLite file, and checks the replies and the rows.
func TestJobOpenAPI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		database string
		layout   schema.LayoutName
	}{{onMariaDB, schema.Layout24}, {onMariaDB, schema.Layout34}, {onMariaDB, schema.Layout35}, {onSQLite, schema.Layout34}} {
		layout := c.layout
		t.Run(c.database+"/"+string(layout), func(t *testing.T) {
			t.Parallel()
			b := setupJobAPIOn(t, c.database, layout, nil)

			r := b.admin(t, "addJob", addJobBody)
			require.Equal(t, "Success", r.msg())
			id := addedID(t, r)
			j := b.job(t, id)
			require.Equal(t, 1, j.JobGroup)
			require.Equal(t, "api job", j.JobDesc)
			require.Equal(t, "ops", j.Author)
			require.Equal(t, "CRON", j.ScheduleType)
			require.Equal(t, "0 0 3 * * ?", j.ScheduleConf)
			require.Equal(t, "demoJobHandler", j.ExecutorHandler)
			require.Equal(t, "p0", j.ExecutorParam)
			require.Equal(t, 10, j.ExecutorTimeout)
			require.Equal(t, 1, j.ExecutorFailRetryCount)
			require.Equal(t, 0, j.TriggerStatus, "created stopped")
			require.Equal(t, "", j.ChildJobID)

			if layout != schema.Layout35 {
				// Scripts written against the 2.x–3.4 form name the description jobDesc.
				r = b.admin(t, "addJob", strings.Replace(addJobBody, `"name":"api job"`, `"jobDesc":"legacy job"`, 1))
				require.Equal(t, "legacy job", b.job(t, addedID(t, r)).JobDesc)
			}

			r = b.admin(t, "updateJob", withID(updateJobBody, id))
			require.Equal(t, 200, r.Code, r.msg())
			j = b.job(t, id)
			require.Equal(t, 1, j.JobGroup, "the group is left unchanged")
			require.Equal(t, "api job v2", j.JobDesc)
			require.Equal(t, "FIX_RATE", j.ScheduleType)
			require.Equal(t, "60", j.ScheduleConf)
			require.Equal(t, "ROUND", j.ExecutorRouteStrategy)
			require.Equal(t, "otherHandler", j.ExecutorHandler)

			r = b.admin(t, "startJob", `{"id":`+strconv.Itoa(id)+`}`)
			require.Equal(t, 200, r.Code, r.msg())
			j = b.job(t, id)
			require.Equal(t, 1, j.TriggerStatus)
			require.Positive(t, j.TriggerNextTime)

			r = b.admin(t, "stopJob", `{"id":`+strconv.Itoa(id)+`}`)
			require.Equal(t, 200, r.Code, r.msg())
			j = b.job(t, id)
			require.Equal(t, 0, j.TriggerStatus)
			require.Zero(t, j.TriggerNextTime)

			r = b.admin(t, "triggerJob", `{"id":`+strconv.Itoa(id)+`,"executorParam":"once","addressList":null}`)
			require.Equal(t, 200, r.Code, r.msg())
			require.Eventually(t, func() bool { // the answer comes once the trigger is stored; it is sent right after
				return b.db.Count(t, "xxl_job_log",
					"job_id = ? AND executor_param = 'once' AND trigger_code = 200 AND trigger_msg LIKE '%Manual trigger%'", id) == 1
			}, 20*time.Second, 20*time.Millisecond)

			r = b.admin(t, "removeJob", `{"id":`+strconv.Itoa(id)+`}`)
			require.Equal(t, 200, r.Code, r.msg())
			require.Zero(t, b.db.Count(t, "xxl_job_info", "id = ?", id))
			require.Zero(t, b.db.Count(t, "xxl_job_log", "job_id = ?", id))
			r = b.admin(t, "removeJob", `{"id":`+strconv.Itoa(id)+`}`)
			require.Equal(t, 200, r.Code, "an unknown id is success")
		})
	}
}

// TestJobOpenAPIRefusesBadInput checks that bad bodies get a code-500 envelope with a
// message and change nothing.
func TestJobOpenAPIRefusesBadInput(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, testJobOpenAPIRefusesBadInput)
}

func testJobOpenAPIRefusesBadInput(t *testing.T, b jobAPIBundle) {
	jobs := b.db.Count(t, "xxl_job_info", "")
	for name, c := range map[string]struct{ uri, body, msg string }{
		"unknown group":   {"addJob", strings.Replace(addJobBody, `"jobGroup":1`, `"jobGroup":9999`, 1), "choose executor"},
		"no group":        {"addJob", strings.Replace(addJobBody, `"jobGroup":1,`, ``, 1), "choose executor"},
		"bad cron":        {"addJob", strings.Replace(addJobBody, `0 0 3 * * ?`, `not a cron`, 1), "cron is not valid"},
		"bad route":       {"addJob", strings.Replace(addJobBody, `"FIRST"`, `"NOWHERE"`, 1), "route strategy is not valid"},
		"bad glue":        {"addJob", strings.Replace(addJobBody, `"BEAN"`, `"GLUE_COBOL"`, 1), "run mode is not valid"},
		"no description":  {"addJob", strings.Replace(addJobBody, `"name":"api job",`, ``, 1), "job description"},
		"not an object":   {"addJob", `[1,2]`, "invalid request"},
		"not json":        {"startJob", `id=1`, "invalid request"},
		"wrong type":      {"startJob", `{"id":"x1"}`, "invalid request"},
		"trailing text":   {"startJob", `{"id":1} {"id":2}`, "invalid request"},
		"no id":           {"updateJob", strings.Replace(updateJobBody, `"id":%d,`, ``, 1), "id missing"},
		"unknown job":     {"startJob", `{"id":424242}`, "job id not found"},
		"unknown trigger": {"triggerJob", `{"id":424242}`, "job id not found"},
	} {
		r := b.admin(t, c.uri, c.body)
		require.Equal(t, 500, r.Code, name)
		require.NotEmpty(t, c.msg, "%s: the case names the message it expects", name)
		require.Contains(t, strings.ToLower(r.msg()), strings.ToLower(c.msg), name)
	}
	require.Equal(t, jobs, b.db.Count(t, "xxl_job_info", ""))
}

// TestJobOpenAPIRefusesChildLoop: the call has no child field, but an update keeps the
// child list, which the console's loop check still covers: a loop another process
// wrote is refused on update.
func TestJobOpenAPIRefusesChildLoop(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, testJobOpenAPIRefusesChildLoop)
}

func testJobOpenAPIRefusesChildLoop(t *testing.T, b jobAPIBundle) {
	a := addedID(t, b.admin(t, "addJob", addJobBody))
	c := addedID(t, b.admin(t, "addJob", addJobBody))
	b.db.Exec(t, "UPDATE xxl_job_info SET child_jobid = ? WHERE id = ?", strconv.Itoa(c), a)
	b.db.Exec(t, "UPDATE xxl_job_info SET child_jobid = ? WHERE id = ?", strconv.Itoa(a), c)
	r := b.admin(t, "updateJob", withID(updateJobBody, a))
	require.Equal(t, 500, r.Code)
	require.Contains(t, r.msg(), strconv.Itoa(a)+" → "+strconv.Itoa(c))
	require.Equal(t, "api job", b.job(t, a).JobDesc, "unchanged")
}

// TestJobOpenAPIToken checks that a wrong or missing token is refused, and that a
// blank xxl.job.accessToken does not open the job calls.
func TestJobOpenAPIToken(t *testing.T) {
	t.Parallel()
	for _, database := range jobAPIDatabases {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			testJobOpenAPIToken(t, database)
		})
	}
}

func testJobOpenAPIToken(t *testing.T, database string) {
	b := setupJobAPIOn(t, database, schema.Layout34, nil)
	jobs := b.db.Count(t, "xxl_job_info", "")
	for name, headers := range map[string][]string{
		"missing":  nil,
		"wrong":    {"XXL-JOB-ACCESS-TOKEN", "api-token2"},
		"case":     {"XXL-JOB-ACCESS-TOKEN", "API-TOKEN"},
		"app only": {"XXL-JOB-APPNAME", "xxl-job-executor-sample"},
	} {
		r := b.call(t, "addJob", addJobBody, headers...)
		require.Equal(t, 500, r.Code, name)
		require.Equal(t, "The access token is wrong.", r.msg(), name)
	}
	require.Equal(t, jobs, b.db.Count(t, "xxl_job_info", ""))

	// Without a global token the executor calls are open, the job calls are not.
	db := newDBOn(t, database, schema.Layout34)
	cfg, err := config.Load([]string{"--xxl.job.accessToken="}, nil)
	require.NoError(t, err)
	a, err := Build(context.Background(), Options{Config: cfg, DB: db.SQL, Location: db.Loc,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = a.App.Listener(ln) }()
	t.Cleanup(func() { _ = a.App.Shutdown() })
	open := jobAPIBundle{db: db, base: "http://" + ln.Addr().String() + cfg.ContextPath}
	r := open.call(t, "addJob", addJobBody)
	require.Equal(t, 500, r.Code)
	require.Equal(t, "The access token is wrong.", r.msg())
	r = open.call(t, "registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"}`)
	require.Equal(t, 200, r.Code, r.msg())
}

// TestJobOpenAPIGroupToken: on a 3.5 database a group's app name and token authorise
// the calls on that group's jobs only.
func TestJobOpenAPIGroupToken(t *testing.T) {
	t.Parallel()
	b := setupJobAPI(t, schema.Layout35, nil)
	b.db.Exec(t, "UPDATE xxl_job_group SET access_token = 'tok-a' WHERE id = 1")
	b.db.Exec(t, `INSERT INTO xxl_job_group (id, app_name, name, address_type, address_list, access_token, update_time)
		VALUES (2, 'app-b', 'B', 1, ?, 'tok-b', NOW())`, b.exec)
	asA := func(uri, body string) apiReply {
		return b.call(t, uri, body, "XXL-JOB-APPNAME", "xxl-job-executor-sample", "XXL-JOB-ACCESS-TOKEN", "tok-a")
	}
	own := addedID(t, asA("addJob", addJobBody))
	require.Equal(t, 1, b.job(t, own).JobGroup)
	other := addedID(t, b.admin(t, "addJob", addJobIn(2)))

	r := asA("addJob", addJobIn(2))
	require.Equal(t, 500, r.Code, "another group's job may not be created")
	for _, uri := range []string{"updateJob", "startJob", "stopJob", "triggerJob", "removeJob"} {
		r = asA(uri, withID(updateJobBody, other))
		require.Equal(t, 500, r.Code, uri)
		require.NotEmpty(t, r.msg(), uri)
	}
	require.Equal(t, "api job", b.job(t, other).JobDesc)
	require.Zero(t, b.db.Count(t, "xxl_job_log", "job_id = ?", other))
	// The read calls see that group's jobs only too.
	require.Equal(t, 500, asA("getJob", `{"id":`+strconv.Itoa(other)+`}`).Code)
	require.Equal(t, 200, asA("getJob", `{"id":`+strconv.Itoa(own)+`}`).Code)
	r = asA("listJobs", `{}`)
	require.Equal(t, 200, r.Code, r.msg())
	require.NotContains(t, string(r.Data), `"jobGroup":2`)
	require.Contains(t, string(r.Data), `"id":`+strconv.Itoa(own)+`,`)

	for _, uri := range []string{"updateJob", "startJob", "stopJob", "triggerJob"} {
		r = asA(uri, withID(updateJobBody, own))
		require.Equal(t, 200, r.Code, "%s: %s", uri, r.msg())
	}
	require.Equal(t, "api job v2", b.job(t, own).JobDesc)
	require.Eventually(t, func() bool {
		return b.db.Count(t, "xxl_job_log", "job_id = ? AND trigger_code = 200", own) == 1
	}, 20*time.Second, 20*time.Millisecond)

	// A group's token with another app name, or a wrong token, is refused.
	r = b.call(t, "startJob", `{"id":1}`, "XXL-JOB-APPNAME", "app-b", "XXL-JOB-ACCESS-TOKEN", "tok-a")
	require.Equal(t, "The access token is wrong.", r.msg())
	r = b.call(t, "startJob", `{"id":1}`, "XXL-JOB-APPNAME", "xxl-job-executor-sample", "XXL-JOB-ACCESS-TOKEN", "tok-x")
	require.Equal(t, "The access token is wrong.", r.msg())

	r = asA("removeJob", `{"id":`+strconv.Itoa(own)+`}`)
	require.Equal(t, 200, r.Code, r.msg())
	require.Zero(t, b.db.Count(t, "xxl_job_info", "id = ?", own))
}

// countLimiter admits its first n calls and refuses the rest.
type countLimiter struct {
	mu sync.Mutex
	n  int
}

func (l *countLimiter) Wait(context.Context, string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	return l.n >= 0
}

// TestJobOpenAPIRateLimit: a call the limiter refuses is answered with HEAD's 502
// envelope and changes nothing.
func TestJobOpenAPIRateLimit(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupLimitedOn, testJobOpenAPIRateLimit)
}

func testJobOpenAPIRateLimit(t *testing.T, b jobAPIBundle) {
	addedID(t, b.admin(t, "addJob", addJobBody))
	jobs := b.db.Count(t, "xxl_job_info", "")
	r := b.admin(t, "addJob", addJobBody)
	require.Equal(t, 502, r.Code)
	require.Equal(t, "Too many requests, please try again later.", r.msg())
	require.Equal(t, jobs, b.db.Count(t, "xxl_job_info", ""))
	// The executor calls are not limited.
	r = b.admin(t, "registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"}`)
	require.Equal(t, 200, r.Code, r.msg())
}

// TestJobOpenAPIRefusedCallersTakeNoPermits: callers refused for their credentials —
// a wrong access token, a wrong group token, an unknown or malformed bearer token —
// are answered before the limiter, so that they cannot use up the permits of the
// callers that authenticate.
func TestJobOpenAPIRefusedCallersTakeNoPermits(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupLimitedOn, func(t *testing.T, b jobAPIBundle) {
		for i := range 30 {
			for _, headers := range [][]string{
				{"XXL-JOB-ACCESS-TOKEN", "guess-" + strconv.Itoa(i)},
				{"XXL-JOB-APPNAME", "xxl-job-executor-sample", "XXL-JOB-ACCESS-TOKEN", "guess"},
				{"Authorization", fmt.Sprintf("Bearer xat_%043d", i)},
				{"Authorization", "Bearer xat_junk" + strconv.Itoa(i)},
			} {
				r := b.call(t, "startJob", `{"id":1}`, headers...)
				require.Equal(t, 500, r.Code, "%v: %s", headers, r.msg())
			}
		}
		r := b.admin(t, "startJob", `{"id":1}`)
		require.Equal(t, 200, r.Code, "the permit is still there: %s", r.msg())
		r = b.admin(t, "stopJob", `{"id":1}`)
		require.Equal(t, 502, r.Code, "the limiter applies to callers that authenticate")
	})
}

// TestJobOpenAPIBoundsRefusedBearers: a bearer call costs a database read, so refused
// bearer tokens are bounded per client address — 10 refusals of one token, 100 in all
// within a minute — past which the client's bearer calls are answered 502 without a
// read; other clients and the access token headers are not affected, and the next
// minute starts afresh.
func TestJobOpenAPIBoundsRefusedBearers(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	b := setupJobAPIWith(t, onMariaDB, schema.Layout34, Options{Clock: clk})
	ctx := context.Background()
	token := func(n int, revoked bool) string {
		secret := fmt.Sprintf("xat_%s%03d", strings.Repeat("T", 40), n)
		sum := sha256.Sum256([]byte(secret))
		row := schema.APIToken{Name: "script " + strconv.Itoa(n), Hash: hex.EncodeToString(sum[:]), Groups: []int{1},
			CreateUser: "admin", CreateTime: clk.Now().UnixMilli()}
		id, err := b.store.InsertAPIToken(ctx, row)
		require.NoError(t, err)
		if revoked {
			_, err = b.store.RevokeAPIToken(ctx, id, "admin", clk.Now().UnixMilli())
			require.NoError(t, err)
		}
		return secret
	}
	good, gone := token(1, false), token(2, true)
	bearer := func(secret string) apiReply {
		return b.call(t, "getJob", `{"id":1}`, "Authorization", "Bearer "+secret)
	}

	for i := range 10 {
		require.Equal(t, "The API token has been revoked.", bearer(gone).msg(), "refusal %d", i)
	}
	r := bearer(gone)
	require.Equal(t, 502, r.Code, "the 11th refusal of one token in a minute")
	require.Equal(t, "Too many requests, please try again later.", r.msg())
	require.Equal(t, 200, bearer(good).Code, "the client's other tokens still work")
	require.Contains(t, b.logs.String(), "calls with that token are answered 502")

	for i := range 90 {
		require.Equal(t, "The API token is not valid.", bearer(fmt.Sprintf("xat_%043d", i)).msg(), "refusal %d", i)
	}
	require.Equal(t, 502, bearer(fmt.Sprintf("xat_%043d", 999)).Code, "100 refusals in a minute block the client's bearer calls")
	// Unknown secrets do not use up a valid token's calls: one that authenticated
	// lately still works from that address.
	require.Equal(t, 200, bearer(good).Code, "a token known to be good is not blocked by others' refusals")
	require.Contains(t, b.logs.String(), "calls with any token not known to be good are answered 502")
	require.Equal(t, 200, b.admin(t, "getJob", `{"id":1}`).Code, "the access token headers are not bounded")

	clk.Advance(time.Minute)
	require.Equal(t, 200, bearer(good).Code, "a new minute")
	require.Equal(t, "The API token has been revoked.", bearer(gone).msg())
}

// TestJobOpenAPIDocument: openapi.json is served under the context path and at the
// root, parses, and lists the six calls, the read calls and the bearer scheme.
func TestJobOpenAPIDocument(t *testing.T) {
	t.Parallel()
	b := setupJobAPI(t, schema.Layout34, nil)
	root := strings.TrimSuffix(b.base, "/xxl-job-admin")
	for _, u := range []string{b.base + "/api/openapi.json", root + "/api/openapi.json"} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, u)
		var doc struct {
			OpenAPI    string                     `json:"openapi"`
			Paths      map[string]json.RawMessage `json:"paths"`
			Components struct {
				SecuritySchemes map[string]struct {
					Type   string `json:"type"`
					Scheme string `json:"scheme"`
				} `json:"securitySchemes"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc), u)
		require.True(t, strings.HasPrefix(doc.OpenAPI, "3."), doc.OpenAPI)
		paths := make([]string, 0, len(doc.Paths))
		for p := range doc.Paths {
			paths = append(paths, p)
		}
		require.ElementsMatch(t, []string{"/api/addJob", "/api/updateJob", "/api/removeJob",
			"/api/startJob", "/api/stopJob", "/api/triggerJob",
			"/api/listJobs", "/api/getJob", "/api/listLogs", "/api/getLog",
			"/api/listCalendars", "/api/saveCalendar", "/api/removeCalendar",
			"/api/addWorkflow", "/api/updateWorkflow", "/api/removeWorkflow", "/api/triggerWorkflow",
			"/api/cancelWorkflowRun", "/api/rerunWorkflowRun", "/api/getWorkflowRun", "/api/listWorkflowRuns",
			"/api/getWorkflow", "/api/listWorkflows",
			"/api/listDrains", "/api/drainExecutor", "/api/undrainExecutor"}, paths)
		require.Equal(t, "bearer", doc.Components.SecuritySchemes["bearerAuth"].Scheme)
		for p, raw := range doc.Paths {
			require.Contains(t, string(raw), `"bearerAuth"`, p)
		}
	}
}

// TestJobOpenAPITimeZone: addJob and updateJob take the job's IANA zone as timeZone;
// getJob shows it; an update without the field keeps it; an unknown zone is refused in
// the envelope and changes nothing.
func TestJobOpenAPITimeZone(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		zoned := strings.Replace(addJobBody, `"glueType"`, `"timeZone":"Europe/Berlin","glueType"`, 1)
		id := addedID(t, b.admin(t, "addJob", zoned))
		require.Equal(t, "Europe/Berlin", b.job(t, id).TimeZone)
		r := b.admin(t, "getJob", `{"id":`+strconv.Itoa(id)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		var got struct {
			TimeZone string `json:"timeZone"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &got))
		require.Equal(t, "Europe/Berlin", got.TimeZone)

		upd := strings.Replace(withID(updateJobBody, id), `"FIX_RATE","scheduleConf":"60"`, `"CRON","scheduleConf":"0 0 3 * * ?"`, 1)
		require.Equal(t, 200, b.admin(t, "updateJob", upd).Code)
		require.Equal(t, "Europe/Berlin", b.job(t, id).TimeZone, "HEAD's body has no timeZone: the zone is kept")

		bad := strings.Replace(upd, `"glueType"`, `"timeZone":"Atlantis/Capital","glueType"`, 1)
		r = b.admin(t, "updateJob", bad)
		require.Equal(t, 500, r.Code)
		require.Equal(t, `Unknown time zone "Atlantis/Capital": give an IANA zone id such as Europe/Berlin`, r.msg())
		require.Equal(t, "Europe/Berlin", b.job(t, id).TimeZone)
		r = b.admin(t, "addJob", strings.Replace(addJobBody, `"glueType"`, `"timeZone":"Atlantis/Capital","glueType"`, 1))
		require.Equal(t, 500, r.Code)

		clear := strings.Replace(upd, `"glueType"`, `"timeZone":"","glueType"`, 1)
		require.Equal(t, 200, b.admin(t, "updateJob", clear).Code)
		require.Empty(t, b.job(t, id).TimeZone)
	})
}

// TestJobOpenAPICalendars: calendars are saved, listed and removed through the
// OpenAPI; addJob attaches them (calendarIds), a job's preview leaves out the days
// they exclude, an unknown calendar id or a bad spec is refused in the envelope, and
// a calendar in use cannot be removed.
func TestJobOpenAPICalendars(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		r := b.admin(t, "saveCalendar", `{"name":"weekends","kind":"WEEKLY","spec":"SAT,SUN"}`)
		require.Equal(t, 200, r.Code, r.msg())
		cal, err := strconv.Atoi(string(r.Data))
		require.NoError(t, err, string(r.Data))
		r = b.admin(t, "saveCalendar", `{"name":"bad","kind":"YEARLY","spec":"13-01"}`)
		require.Equal(t, 500, r.Code)
		require.Equal(t, `Calendar days: "13-01" is not a day of the year (MM-dd)`, r.msg())
		r = b.admin(t, "saveCalendar", `{"name":"Weekends","kind":"DATES","spec":"2026-01-01"}`)
		require.Equal(t, `A calendar named "Weekends" exists already`, r.msg())

		r = b.admin(t, "listCalendars", `{}`)
		require.Equal(t, 200, r.Code, r.msg())
		var cals []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
			Kind string `json:"kind"`
			Spec string `json:"spec"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &cals))
		require.Len(t, cals, 1)
		require.Equal(t, "weekends", cals[0].Name)

		r = b.admin(t, "addJob", strings.Replace(addJobBody, `"glueType"`, `"calendarIds":[99999],"glueType"`, 1))
		require.Equal(t, 500, r.Code)
		require.Equal(t, "Calendar(99999) not found", r.msg())
		id := addedID(t, b.admin(t, "addJob", strings.Replace(addJobBody, `"glueType"`, `"calendarIds":[`+strconv.Itoa(cal)+`],"glueType"`, 1)))
		require.Equal(t, []int{cal}, b.job(t, id).CalendarIDs)

		r = b.admin(t, "removeCalendar", `{"id":`+strconv.Itoa(cal)+`}`)
		require.Equal(t, 500, r.Code)
		require.Equal(t, "The calendar is attached to jobs "+strconv.Itoa(id)+"; detach it from them first", r.msg())
		upd := strings.Replace(withID(updateJobBody, id), `"glueType"`, `"calendarIds":[],"glueType"`, 1)
		require.Equal(t, 200, b.admin(t, "updateJob", upd).Code)
		require.Empty(t, b.job(t, id).CalendarIDs)
		require.Equal(t, 200, b.admin(t, "removeCalendar", `{"id":`+strconv.Itoa(cal)+`}`).Code)
		require.Zero(t, b.db.Count(t, schema.CalendarTable, ""))
	})
}

// TestJobOpenAPIBucketPerCredential: the limiter gives each credential its own
// permits (HEAD shares one bucket among all callers): a read-only API token that used
// up its second's worth of calls is answered 502, and the global access token and
// another API token go on being served.
func TestJobOpenAPIBucketPerCredential(t *testing.T) {
	t.Parallel()
	b := setupJobAPIOn(t, onMariaDB, schema.Layout34, openapi.NewLimiter(1))
	ctx := context.Background()
	token := func(n int) string {
		secret := fmt.Sprintf("xat_%s%03d", strings.Repeat("B", 40), n)
		sum := sha256.Sum256([]byte(secret))
		_, err := b.store.InsertAPIToken(ctx, schema.APIToken{Name: "reader " + strconv.Itoa(n), Hash: hex.EncodeToString(sum[:]),
			Groups: []int{1}, ReadOnly: true, CreateUser: "admin", CreateTime: time.Now().UnixMilli()})
		require.NoError(t, err)
		return secret
	}
	busy, other := token(1), token(2)
	list := func(headers ...string) apiReply { return b.call(t, "listJobs", `{"jobGroup":1}`, headers...) }
	// Five calls at once: one permit now, one after waiting a second, the rest refused.
	codes := make(chan int, 5)
	for range 5 {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, b.base+"/api/listJobs", strings.NewReader(`{"jobGroup":1}`))
			req.Header.Set("Authorization", "Bearer "+busy)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			defer resp.Body.Close()
			var r apiReply
			_ = json.NewDecoder(resp.Body).Decode(&r)
			codes <- r.Code
		}()
	}
	// The refusals come at once; the others of the busy token hold its permits for
	// the next second meanwhile.
	refused, got := 0, 0
	for refused < 2 {
		if <-codes == 502 {
			refused++
		}
		got++
	}
	require.Equal(t, 200, list("XXL-JOB-ACCESS-TOKEN", "api-token").Code, "the access token has its own permits")
	require.Equal(t, 200, list("Authorization", "Bearer "+other).Code, "another token has its own permits")
	for ; got < 5; got++ {
		<-codes
	}
}

// TestJobOpenAPIRetryBackoff: addJob and updateJob take the retry back-off
// (retryBackoff, retryWaitMs, retryCapMs, retryJitter); getJob shows it; an update
// without retryBackoff keeps it; a back-off that cannot be planned is refused in the
// envelope and changes nothing; an empty retryBackoff retries at once again.
func TestJobOpenAPIRetryBackoff(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		backoff := `"retryBackoff":"EXPONENTIAL","retryWaitMs":1000,"retryCapMs":4000,"retryJitter":20,"glueType"`
		id := addedID(t, b.admin(t, "addJob", strings.Replace(addJobBody, `"glueType"`, backoff, 1)))
		want := schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000, Jitter: 20}
		require.Equal(t, want, b.job(t, id).Retry)
		r := b.admin(t, "getJob", `{"id":`+strconv.Itoa(id)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		var got struct {
			RetryBackoff string `json:"retryBackoff"`
			RetryWaitMs  int64  `json:"retryWaitMs"`
			RetryCapMs   int64  `json:"retryCapMs"`
			RetryJitter  int    `json:"retryJitter"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &got))
		require.Equal(t, []any{"EXPONENTIAL", int64(1000), int64(4000), 20}, []any{got.RetryBackoff, got.RetryWaitMs, got.RetryCapMs, got.RetryJitter})

		upd := withID(updateJobBody, id)
		require.Equal(t, 200, b.admin(t, "updateJob", upd).Code)
		require.Equal(t, want, b.job(t, id).Retry, "HEAD's body has no retryBackoff: the back-off is kept")

		bad := strings.Replace(upd, `"glueType"`, `"retryBackoff":"EXPONENTIAL","retryWaitMs":5000,"retryCapMs":1000,"glueType"`, 1)
		r = b.admin(t, "updateJob", bad)
		require.Equal(t, 500, r.Code)
		require.Equal(t, "The longest retry wait (1000 ms) must not be shorter than the first (5000 ms)", r.msg())
		require.Equal(t, want, b.job(t, id).Retry)
		r = b.admin(t, "addJob", strings.Replace(addJobBody, `"glueType"`, `"retryBackoff":"RANDOM","retryWaitMs":5000,"glueType"`, 1))
		require.Equal(t, 500, r.Code)
		require.Contains(t, r.msg(), `Unknown retry wait "RANDOM"`)

		clear := strings.Replace(upd, `"glueType"`, `"retryBackoff":"","glueType"`, 1)
		require.Equal(t, 200, b.admin(t, "updateJob", clear).Code)
		require.Zero(t, b.job(t, id).Retry)
	})
}
