package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

func jdbcArgs(db *schematest.DB, name string) []string {
	return []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + name + "?serverTimezone=Asia/Shanghai",
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
	}
}

// A bad value stops start-up with one line naming the key.
func TestBadConfigurationStopsWithOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  []string
		key  string
	}{
		{args: []string{"--server.port=80a"}, key: "server.port"},
		{args: []string{"--spring.datasource.url=mysql://nope"}, key: "spring.datasource.url"},
		{env: []string{"SPRING_DATASOURCE_URL=jdbc:mysql://h/db?serverTimezone=Mars/Olympus"}, key: "spring.datasource.url"},
		{args: []string{"--xxl.job.timeout=-1"}, key: "xxl.job.timeout"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, tc.env, &out, &errOut, nil)
		require.Error(t, err, "%v %v", tc.args, tc.env)
		require.Contains(t, err.Error(), tc.key)
		require.NotContains(t, err.Error(), "\n")
	}
}

// schema init creates a layout on an empty database (creating the database itself)
// and refuses a database that has tables; schema check reports the layout; the admin
// then starts on it. A key the admin does not read is a warning in a properties file
// and refused as an argument.
func TestSchemaCommands(t *testing.T) {
	t.Parallel()
	db := schematest.NewEmpty(t)
	ctx := context.Background()
	name := db.Name + "_new"
	t.Cleanup(func() { _, _ = db.SQL.Exec("DROP DATABASE IF EXISTS " + name) })
	var out, errOut bytes.Buffer
	err := run(ctx, append(jdbcArgs(db, name), "schema", "init", "--xxl.job.nosuchkey=1"), nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "--xxl.job.nosuchkey: unknown option")
	props := filepath.Join(t.TempDir(), "application.properties")
	require.NoError(t, os.WriteFile(props, []byte("xxl.job.nosuchkey=1\n"), 0o600))
	args := append(jdbcArgs(db, name), "schema", "init", "--layout=2.4", "--config", props)
	require.NoError(t, run(ctx, args, nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "created the 2.4 layout")
	require.Contains(t, errOut.String(), "xxl.job.nosuchkey")

	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "check"), nil, &out, &errOut, nil))
	require.True(t, strings.HasPrefix(out.String(), "database "+name+":\nlayout: 2.4"), out.String())
	require.Contains(t, out.String(), "ok")

	err = run(ctx, append(jdbcArgs(db, name), "schema", "init"), nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "already has xxl_job_* tables")

	err = run(ctx, append(jdbcArgs(db, db.Name), "schema", "check"), nil, &out, &errOut, nil)
	require.Error(t, err, "an empty database cannot run the admin")
	err = run(ctx, append(jdbcArgs(db, db.Name), "schema", "nope"), nil, &out, &errOut, nil)
	require.Error(t, err)
	err = run(ctx, append(jdbcArgs(db, db.Name), "frobnicate"), nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "unknown command")
}

// schema upgrade adds the scan index to a database that lacks it (as one made by
// upstream's script), prints what it did, and says so when there is nothing to do;
// schema check advises it before and not after, without failing. The embedded file
// is upgraded the same way.
func TestSchemaUpgradeCommand(t *testing.T) {
	t.Parallel()
	db := schematest.NewEmpty(t)
	ctx := context.Background()
	name := db.Name + "_up"
	t.Cleanup(func() { _, _ = db.SQL.Exec("DROP DATABASE IF EXISTS " + name) })
	var out, errOut bytes.Buffer
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "init", "--layout=2.4"), nil, &out, &errOut, nil))
	_, err := db.SQL.Exec("ALTER TABLE " + name + ".xxl_job_info DROP INDEX i_xxl_admin_trigger_next")
	require.NoError(t, err)

	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "check"), nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "advice: missing index i_xxl_admin_trigger_next")
	require.Contains(t, out.String(), "ALTER TABLE xxl_job_info ADD INDEX i_xxl_admin_trigger_next (trigger_status, trigger_next_time)")
	require.Contains(t, out.String(), "\nok\n")

	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "upgrade"), nil, &out, &errOut, nil))
	require.Equal(t, "database "+name+":\nadded index i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time): the scan reads only due jobs instead of every job\n", out.String())
	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "upgrade"), nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "nothing to do")
	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(db, name), "schema", "check"), nil, &out, &errOut, nil))
	require.NotContains(t, out.String(), "advice")

	err = run(ctx, append(jdbcArgs(db, db.Name), "schema", "upgrade"), nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "schema init")

	file := filepath.Join(t.TempDir(), "xxl-job.db")
	err = run(ctx, []string{"--xxl.admin.embedded.path=" + file, "schema", "upgrade"}, nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "no embedded database")
	lite, err := schema.OpenSQLite(file, time.UTC)
	require.NoError(t, err)
	require.NoError(t, schema.Init(ctx, lite, schema.Layout34))
	_, err = lite.Exec("DROP INDEX i_xxl_admin_trigger_next")
	require.NoError(t, err)
	lite.Close()
	out.Reset()
	require.NoError(t, run(ctx, []string{"--xxl.admin.embedded.path=" + file, "schema", "upgrade"}, nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "added index i_xxl_admin_trigger_next")
	out.Reset()
	require.NoError(t, run(ctx, []string{"--xxl.admin.embedded.path=" + file, "schema", "upgrade"}, nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "nothing to do")
}

// Start-up warns once, with the statement to run, when the scan index is missing and
// there are more than schema.ScanIndexWarnJobs jobs; at that many or fewer it is quiet.
func TestServeWarnsAboutMissingScanIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "xxl-job.db")
	lite, err := schema.OpenSQLite(path, time.UTC)
	require.NoError(t, err)
	require.NoError(t, schema.Init(context.Background(), lite, schema.Layout34))
	_, err = lite.Exec("DROP INDEX i_xxl_admin_trigger_next")
	require.NoError(t, err)
	addJobs := func(n int) {
		_, err := lite.Exec(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?)
			INSERT INTO xxl_job_info (job_group, job_desc, schedule_type, schedule_conf, glue_type, trigger_status)
			SELECT 1, 'job', 'CRON', '0 0 3 * * ?', 'BEAN', 0 FROM s`, n)
		require.NoError(t, err)
	}
	addJobs(schema.ScanIndexWarnJobs - 1) // with the seed job: exactly the threshold
	const warning = "has no index on (trigger_status, trigger_next_time)"

	a := startEmbedded(t, path, 0)
	a.stop(t)
	require.NotContains(t, a.log.String(), warning)

	addJobs(1)
	a = startEmbedded(t, path, 0)
	a.stop(t)
	require.Equal(t, 1, strings.Count(a.log.String(), warning), a.log.String())
	require.Contains(t, a.log.String(), "CREATE INDEX i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time)")
	require.Contains(t, a.log.String(), "xxl-admin-go schema upgrade")
	lite.Close()
}
