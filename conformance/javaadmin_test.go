package conformance

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The official xxl-job-admin as a jar, built from upstream's sources outside this
// repository (docs/TESTING.md says how) and named by XXL_TEST_JAVA_ADMIN_JAR_2_4_2,
// _3_4_2 and _3_5_0: each jar given is an admin column of its own, run as a process
// beside the suite on a fresh MariaDB database made by upstream's own
// doc/db/tables_xxl_job.sql, read from the tree the jar was built in.

// javaJarVersions are the upstream versions a jar can be given for, with the column
// name: 3.5.0 is not released, its jar is built from 3.5.0-SNAPSHOT.
var javaJarVersions = []struct{ version, column string }{
	{"2.4.2", "java-jar-2.4.2"},
	{"3.4.2", "java-jar-3.4.2"},
	{"3.5.0", "java-jar-3.5.0-SNAPSHOT"},
}

// javaJarVar is the variable naming the admin jar of an upstream version.
func javaJarVar(version string) string {
	return "XXL_TEST_JAVA_ADMIN_JAR_" + strings.ReplaceAll(version, ".", "_")
}

// javaJarTargets are the admin columns of the jars given; with none, one column that
// skips with a line naming the variables.
func javaJarTargets(s *suite) []adminTarget {
	var out []adminTarget
	for _, v := range javaJarVersions {
		jar := os.Getenv(javaJarVar(v.version))
		if jar == "" {
			continue
		}
		if abs, err := filepath.Abs(jar); err == nil {
			jar = abs // the admin runs in a directory of its own
		}
		out = append(out, adminTarget{
			name:   v.column,
			layout: layoutOf(v.version),
			check: func() string {
				if _, err := os.Stat(jar); err != nil {
					return javaJarVar(v.version) + ": " + err.Error()
				}
				return ""
			},
			start: func(t *testing.T) (*admin, error) { return startJavaJar(t, s, v.column, v.version, jar) },
		})
	}
	if len(out) == 0 {
		why := "no upstream admin jar: XXL_TEST_JAVA_ADMIN_JAR_2_4_2, _3_4_2 and _3_5_0 are unset (docs/TESTING.md)"
		out = append(out, adminTarget{name: "java-jar", layout: "2.4", check: func() string { return why }})
	}
	return out
}

// byArrival orders log rows by the time their run reached the executor, rows without
// a run last: the first and second of two fires a second apart are the ones the
// executor received first and second. An admin sends them in that order as a rule;
// upstream's (trigger pools, the ring beside the console) can send a later one first
// when its trigger threads are slow, as on a busy machine.
func byArrival(ex []exchange, ls []logRow) {
	at := func(l logRow) time.Time {
		if r, ok := runOf(ex, l.ID); ok {
			return r.Start
		}
		return time.Unix(1<<40, 0)
	}
	slices.SortStableFunc(ls, func(a, b logRow) int { return at(a).Compare(at(b)) })
}

// javaCommand is the java launcher for the jars: XXL_TEST_JAVA_ADMIN_JAVA, else java
// on the PATH (every jar runs on JDK 17).
func javaCommand() string {
	return env("XXL_TEST_JAVA_ADMIN_JAVA", "java")
}

// upstreamSQL is doc/db/tables_xxl_job.sql of the tree a jar was built in
// (<tree>/xxl-job-admin/target/<jar>), or "" when the jar is not in such a tree.
func upstreamSQL(jar string) string {
	p := filepath.Join(filepath.Dir(jar), "..", "..", "doc", "db", "tables_xxl_job.sql")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

var datetimeValue = regexp.MustCompile(`true:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^ ]*`)

// sansTimes blanks the DATETIME values of rows rendered by the schema test.
func sansTimes(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = datetimeValue.ReplaceAllString(r, "true:<time>")
	}
	return out
}

var (
	sqlCreateDatabase = regexp.MustCompile(`(?im)^\s*CREATE\s+DATABASE\b[^;]*;`)
	sqlUse            = regexp.MustCompile("(?im)^\\s*use\\s+`?\\w+`?\\s*;")
)

// applyUpstreamSQL runs upstream's table script in the test database, without its
// CREATE DATABASE and USE of the fixed name xxl_job.
func applyUpstreamSQL(db *schematest.DB, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	script := sqlUse.ReplaceAllString(sqlCreateDatabase.ReplaceAllString(string(b), ""), "")
	c := db.Config.Clone()
	c.MultiStatements = true
	conn, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Exec(script); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// javaJarContextPath is the context path each version ships with.
func javaJarContextPath(version string) string {
	if strings.HasPrefix(version, "2.") {
		return "/xxl-job-admin"
	}
	return ""
}

// javaJarContextArg is the value of server.servlet.context-path for a context path
// ("" for the root): 2.4.2's Tomcat refuses "/" ("Invalid ending comma" in its JMX
// name) and takes the root as the empty string; 3.x ships "/".
func javaJarContextArg(version, ctxPath string) string {
	if ctxPath == "" && !strings.HasPrefix(version, "2.") {
		return "/"
	}
	return ctxPath
}

// startJavaJar starts an upstream admin jar on a fresh database until t ends, with its
// Spring properties on the command line.
func startJavaJar(t *testing.T, s *suite, column, version, jar string, props ...string) (*admin, error) {
	db := schematest.NewEmpty(t)
	layout := layoutOf(version)
	dbArgs := []string{
		"--spring.datasource.url=" + jdbcURL(db.Config.Addr, db),
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
	}
	if script := upstreamSQL(jar); script != "" {
		if err := applyUpstreamSQL(db, script); err != nil {
			return nil, err
		}
	} else {
		// A jar outside its source tree: our schema init makes the same xxl_job_*
		// columns and seed rows (TestSchemaInitMatchesUpstreamSQL).
		bin, err := oursBinary(t)
		if err != nil {
			return nil, err
		}
		if out, err := execOutput(bin, append([]string{"schema", "init", "--layout=" + layout}, dbArgs...)...); err != nil {
			return nil, fmt.Errorf("schema init: %v: %s", err, out)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	ctxPath := javaJarContextPath(version)
	for _, p := range props {
		if v, ok := strings.CutPrefix(p, "--server.servlet.context-path="); ok {
			ctxPath = strings.TrimRight(v, "/")
		}
	}
	args := append([]string{"-jar", jar}, dbArgs...)
	args = append(args,
		"--server.port="+strconv.Itoa(port),
		"--server.servlet.context-path="+javaJarContextArg(version, ctxPath),
		"--xxl.job.i18n=en",
	)
	if layout != "3.5" {
		args = append(args, "--xxl.job.accessToken="+s.cfg.token)
	}
	for _, p := range props {
		if _, ok := strings.CutPrefix(p, "--server.servlet.context-path="); !ok {
			args = append(args, p)
		}
	}
	dir := t.TempDir()
	out := &syncBuffer{}
	cmd := exec.Command(javaCommand(), args...)
	cmd.Dir = dir
	// 3.x writes its log file under LOG_HOME (2.4.2 always under /data/applogs).
	cmd.Env = append(adminEnviron(), "LOG_HOME="+dir)
	cmd.Stdout = out
	cmd.Stderr = out
	started := time.Now()
	done, err := startAdminCmd(t, cmd, 30*time.Second, nil)
	if err != nil {
		return nil, err
	}
	token := s.cfg.token
	if layout == "3.5" {
		token = ""
	}
	a := &admin{
		name: column, root: fmt.Sprintf("http://127.0.0.1:%d", port), contextPath: ctxPath,
		alias: "127.0.0.1", token: token, user: "admin", pass: "123456", i18n: "en", layout: layout,
		db: db.SQL, logs: out.String,
		pause:  func() error { return cmd.Process.Signal(syscall.SIGSTOP) },
		resume: func() error { return cmd.Process.Signal(syscall.SIGCONT) },
	}
	a.spawn = func(t *testing.T, more ...string) (*admin, error) {
		return startJavaJar(t, s, column, version, jar, append(append([]string{}, props...), more...)...)
	}
	// A JVM on two busy cores takes half a minute and more to start.
	if err := waitHTTP(a.base()+"/actuator/health", 4*time.Minute, done); err != nil {
		return nil, fmt.Errorf("%s did not come up: %v\n%s", jar, err, tail(out.String(), 3000))
	}
	t.Logf("%s answered after %s", column, time.Since(started).Round(100*time.Millisecond))
	return a, nil
}

// TestSchemaInitMatchesUpstreamSQL checks that our `schema init --layout=…` makes the
// xxl_job_* tables of upstream's doc/db/tables_xxl_job.sql: the same columns (type,
// nullability, default, order) and seed rows, and every upstream index (ours adds
// some). It reads the script from the tree of each jar given.
func TestSchemaInitMatchesUpstreamSQL(t *testing.T) {
	ran := false
	for _, v := range javaJarVersions {
		jar := os.Getenv(javaJarVar(v.version))
		if jar == "" || upstreamSQL(jar) == "" {
			continue
		}
		ran = true
		t.Run(v.version, func(t *testing.T) {
			up := schematest.NewEmpty(t)
			if err := applyUpstreamSQL(up, upstreamSQL(jar)); err != nil {
				t.Fatal(err)
			}
			ours := schematest.NewEmpty(t)
			bin, err := oursBinary(t)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := execOutput(bin, "schema", "init", "--layout="+layoutOf(v.version),
				"--spring.datasource.url="+jdbcURL(ours.Config.Addr, ours),
				"--spring.datasource.username="+ours.Config.User,
				"--spring.datasource.password="+ours.Config.Passwd); err != nil {
				t.Fatalf("schema init: %v: %s", err, out)
			}
			lines := func(db *schematest.DB, q string) []string {
				rows, err := db.SQL.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				cols, _ := rows.Columns()
				var out []string
				for rows.Next() {
					vals := make([]sql.NullString, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						t.Fatal(err)
					}
					var f []string
					for _, v := range vals {
						f = append(f, fmt.Sprintf("%v:%s", v.Valid, v.String))
					}
					out = append(out, strings.Join(f, " | "))
				}
				return out
			}
			// Columns by name: the order (3.5.0-SNAPSHOT puts add_time and update_time of
			// xxl_job_info last) and integer display widths (bigint(13) or (20)) are
			// cosmetic; they are logged.
			columns := "SELECT table_name, column_name, REGEXP_REPLACE(column_type, '^(tinyint|int|bigint)\\\\([0-9]+\\\\)', '\\\\1'), is_nullable, column_default, extra FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name LIKE 'xxl\\_job\\_%' ORDER BY 1, 2"
			if a, b := lines(up, columns), lines(ours, columns); strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("columns differ:\nupstream:\n%s\nours:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
			order := "SELECT table_name, GROUP_CONCAT(CONCAT(column_name, ' ', column_type) ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name LIKE 'xxl\\_job\\_%' GROUP BY 1 ORDER BY 1"
			upOrder, ourOrder := lines(up, order), lines(ours, order)
			for i := range upOrder {
				if i < len(ourOrder) && upOrder[i] != ourOrder[i] {
					t.Logf("column order or display width differs:\nupstream: %s\nours:     %s", upOrder[i], ourOrder[i])
				}
			}
			indexes := "SELECT table_name, index_name, non_unique, GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name LIKE 'xxl\\_job\\_%' GROUP BY 1, 2, 3 ORDER BY 1, 2"
			have := strings.Join(lines(ours, indexes), "\n") + "\n"
			for _, ix := range lines(up, indexes) {
				if !strings.Contains(have, ix+"\n") {
					t.Errorf("upstream index missing from ours: %s", ix)
				}
			}
			// Seed rows: the users and the lock row alike; every group and job we seed is
			// one of upstream's (add and update times aside: 3.x seeds NOW()); upstream's
			// others (3.4.1+: the AI sample executor and its jobs) are logged.
			// Seed rows, column by column name: the users and the lock row alike; every
			// group and job we seed is one of upstream's (add and update times aside:
			// 3.x seeds NOW()); upstream's others (3.4.1+: the AI sample executor and its
			// jobs) are logged.
			seed := func(table string) string {
				var cols []string
				for _, l := range lines(up, "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '"+table+"' ORDER BY 1") {
					cols = append(cols, "`"+strings.TrimPrefix(l, "true:")+"`")
				}
				return "SELECT " + strings.Join(cols, ", ") + " FROM " + table + " ORDER BY id"
			}
			for _, table := range []string{"xxl_job_user", "xxl_job_registry", "xxl_job_log"} {
				if a, b := lines(up, seed(table)), lines(ours, seed(table)); strings.Join(a, "\n") != strings.Join(b, "\n") {
					t.Errorf("%s seed rows differ:\nupstream:\n%s\nours:\n%s", table, strings.Join(a, "\n"), strings.Join(b, "\n"))
				}
			}
			lock := "SELECT lock_name FROM xxl_job_lock ORDER BY 1"
			if a, b := lines(up, lock), lines(ours, lock); strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("xxl_job_lock rows differ: upstream %v, ours %v", a, b)
			}
			for _, table := range []string{"xxl_job_group", "xxl_job_info"} {
				upRows := sansTimes(lines(up, seed(table)))
				ourRows := sansTimes(lines(ours, seed(table)))
				for _, r := range ourRows {
					if !slices.Contains(upRows, r) {
						t.Errorf("%s: our seed row is not upstream's: %s\nupstream:\n%s", table, r, strings.Join(upRows, "\n"))
					}
				}
				for _, r := range upRows {
					if !slices.Contains(ourRows, r) {
						t.Logf("%s: upstream seeds a row ours does not: %s", table, truncate(r, 120))
					}
				}
			}
		})
	}
	if !ran {
		t.Skip("no upstream admin jar in its source tree: XXL_TEST_JAVA_ADMIN_JAR_2_4_2, _3_4_2 and _3_5_0 are unset (docs/TESTING.md)")
	}
}
