package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Lost-run detection asks the executor (upstream #3989, #3754: runs longer than 10
// minutes failed as lost while still running, because the executor's registered
// address no longer matched the run's). The npm executor registers as 127.0.0.1; the
// run goes to the same executor under another name (localhost), so upstream's check —
// no registry row for the run's address, past the timeout — picks it. With a 2 s
// xxl.admin.lost-run.timeout the lost-run pass (every admin runs one at start, then
// each minute) asks the executor at the run's address, which answers busy: the run is
// kept and finishes with its own result. In the same pass a run whose executor is gone
// (nothing listens at its address) is failed as lost. The pass is a second admin's
// at its start, so the test waits for no minute. On MariaDB and PostgreSQL.
func TestLostRunAsksTheExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 20-s job beside two admins; skipped with -short")
	}
	t.Parallel()
	for _, database := range []struct {
		name string
		open func(t *testing.T) (*schematest.DB, []string)
	}{{"mariadb", func(t *testing.T) (*schematest.DB, []string) {
		db, _ := schematest.New(t, schema.Layout34)
		return db, mysqlDatasource(db)
	}}, {"postgres", func(t *testing.T) (*schematest.DB, []string) {
		p, _ := schematest.NewPostgres(t)
		return p.AsDB(), postgresDatasource(p)
	}}} {
		t.Run(database.name, func(t *testing.T) {
			t.Parallel()
			db, ds := database.open(t)
			lostRunAsksTheExecutor(t, db, ds)
		})
	}
}

func lostRunAsksTheExecutor(t *testing.T, db *schematest.DB, ds []string) {
	admin := runAdmin(t, ds, "--xxl.admin.lost-run.timeout=2000")
	addr := startNodeExecutor(t, admin, "lost-app", "e2e-token")
	moved := strings.Replace(addr, "127.0.0.1", "localhost", 1)
	waitFor(t, "the executor's registry row", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_registry", "registry_key='lost-app'") == 1
	})
	require.Zero(t, db.Count(t, "xxl_job_registry", "registry_value=?", moved), "the run's address is not registered")
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('lost-app', 'lost', 1, ?, NOW())", moved)
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='lost-app'").Scan(&group))
	// Long enough to be running at the second admin's pass, and a little after.
	const secs = 20
	job := insertID(t, db, `INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
		executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_fail_retry_count,
		glue_type, glue_source, glue_updatetime, add_time, update_time, trigger_status, trigger_next_time)
		VALUES (?, 'long run', 'e2e', 'NONE', '', 'DO_NOTHING', 'FIRST', 'slowJobHandler', ?, 'SERIAL_EXECUTION', 0, 'BEAN', '', NOW(), NOW(), NOW(), 0, 0)`,
		group, strconv.Itoa(secs))

	c := consoleLogin(t, admin)
	status, env := c.post(t, "/jobinfo/trigger", url.Values{"id": {strconv.FormatInt(job, 10)}, "executorParam": {strconv.Itoa(secs)}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 200, env.Code, env.Msg)
	var run int64
	waitFor(t, "the long run sent", 20*time.Second, func() bool {
		return db.SQL.QueryRow("SELECT id FROM xxl_job_log WHERE job_id=? AND trigger_code=200", job).Scan(&run) == nil
	})
	var sentTo string
	require.NoError(t, db.SQL.QueryRow("SELECT executor_address FROM xxl_job_log WHERE id=?", run).Scan(&sentTo))
	require.Contains(t, sentTo, "localhost", "sent to the name the executor did not register")

	// A run whose executor is gone, a minute old; then a second admin, whose lost-run
	// pass at start looks at both.
	gone := insertID(t, db, `INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, trigger_time, trigger_code, trigger_msg, handle_code)
		VALUES (?, ?, 'http://127.0.0.1:1/', 'slowJobHandler', ?, 200, 'sent', 0)`, group, job, time.Now().Add(-time.Minute))
	waitFor(t, "the long run 2 s old", 10*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "id = ? AND trigger_time < ?", run, time.Now().Add(-2500*time.Millisecond)) == 1
	})
	runAdmin(t, ds, "--xxl.admin.lost-run.timeout=2000")

	waitFor(t, "the lost-run pass fails the run whose executor is gone", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "id=? AND handle_code=500", gone) == 1
	})
	// The same pass read the long run first (smaller id): it is still open.
	require.Equal(t, 1, db.Count(t, "xxl_job_log", "id=? AND handle_code=0", run), "a run its executor reports running is not failed")
	waitFor(t, "the long run's own result", time.Duration(secs+20)*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "id=? AND handle_code<>0", run) == 1
	})
	var code int
	var msg string
	require.NoError(t, db.SQL.QueryRow("SELECT handle_code, COALESCE(handle_msg, '') FROM xxl_job_log WHERE id=?", run).Scan(&code, &msg))
	require.Equal(t, 200, code, "finished by the executor, not failed as lost: %s", msg)
	t.Logf("LOST-RUN a %d s run at an unregistered address kept by the lost-run pass (executor answered busy) and completed: %q; a run at a dead address failed as lost", secs, msg)
}

// insertID runs an INSERT and returns the id of its row: RETURNING id on PostgreSQL,
// the last insert id on MariaDB.
func insertID(t *testing.T, db *schematest.DB, query string, args ...any) int64 {
	t.Helper()
	var id int64
	if schema.IsPostgres(db.SQL) {
		require.NoError(t, db.SQL.QueryRow(query+" RETURNING id", args...).Scan(&id), query)
		return id
	}
	res, err := db.SQL.Exec(query, args...)
	require.NoError(t, err, query)
	id, err = res.LastInsertId()
	require.NoError(t, err, query)
	return id
}
