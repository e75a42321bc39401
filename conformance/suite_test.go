package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// config is the suite's environment (README.md lists every variable).
type config struct {
	adminURL, adminDSN, adminName string
	adminToken                    string
	adminUser, adminPass          string
	relayHost                     string // host the admin (and executors) reach the relay at

	javaPeerAdmins []string // official images to compare against
	javaVersions   []string // xxl-job-core versions of the Java executors
	executors      []string // executor kinds to run; nil = all that apply
	admins         []string // admins the suite starts: ours, java; nil = both

	execCmd, execName, execProfile string

	scenarios *regexp.Regexp // nil = all
	long      bool
	jobsVia   string // auto, console, db
	report    string
	token     string // token of the admins the suite starts
	postgres  bool   // our admin runs on PostgreSQL (TestConformancePostgres)
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && f != "none" {
			out = append(out, f)
		}
	}
	return out
}

func loadConfig(t *testing.T) *config {
	c := &config{
		adminURL:       os.Getenv("XXL_CONFORMANCE_ADMIN_URL"),
		adminDSN:       os.Getenv("XXL_CONFORMANCE_ADMIN_DSN"),
		adminName:      env("XXL_CONFORMANCE_ADMIN_NAME", "external"),
		adminToken:     env("XXL_CONFORMANCE_ADMIN_TOKEN", "default_token"),
		adminUser:      env("XXL_CONFORMANCE_ADMIN_USER", "admin"),
		adminPass:      env("XXL_CONFORMANCE_ADMIN_PASSWORD", "123456"),
		relayHost:      os.Getenv("XXL_CONFORMANCE_RELAY_HOST"),
		javaPeerAdmins: list(env("XXL_CONFORMANCE_JAVA_ADMIN_IMAGE", "xuxueli/xxl-job-admin:2.4.2")),
		javaVersions:   list(env("XXL_CONFORMANCE_JAVA_VERSIONS", "2.4.2,3.3.2,3.4.2,3.5.0")),
		executors:      list(os.Getenv("XXL_CONFORMANCE_EXECUTORS")),
		admins:         list(env("XXL_CONFORMANCE_ADMINS", "ours,java")),
		execCmd:        os.Getenv("XXL_CONFORMANCE_EXECUTOR_CMD"),
		execName:       env("XXL_CONFORMANCE_EXECUTOR_NAME", "cmd"),
		execProfile:    os.Getenv("XXL_CONFORMANCE_EXECUTOR_PROFILE"),
		long:           os.Getenv("XXL_CONFORMANCE_LONG") != "",
		jobsVia:        env("XXL_CONFORMANCE_JOBS", "auto"),
		report:         env("XXL_CONFORMANCE_REPORT", "report.md"),
		token:          "conformance-token",
	}
	if s := os.Getenv("XXL_CONFORMANCE_SCENARIOS"); s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			t.Fatalf("XXL_CONFORMANCE_SCENARIOS: %v", err)
		}
		c.scenarios = re
	}
	switch c.jobsVia {
	case "auto", "console", "db":
	default:
		t.Fatalf("XXL_CONFORMANCE_JOBS=%q: want auto, console or db", c.jobsVia)
	}
	return c
}

// suite is what every cell shares.
type suite struct {
	cfg   *config
	relay *relay
	rep   *report
}

// adminTarget is one admin column: how to start (or reach) it.
type adminTarget struct {
	name string
	// layout is the table layout of the admin's database ("" when unknown before it
	// starts: an admin given by URL); it decides which executor kinds it serves.
	layout string
	start  func(t *testing.T) (*admin, error)
	check  func() string // "" when it can run here, else the skip reason
}

// serves reports whether an admin of a layout speaks the protocol of an executor
// kind: the 3.5 protocol is spoken on the 3.5 layout only, and the earlier ones on
// every earlier layout (wire-protocol.md §10).
func serves(layout string, k *execKind) bool {
	return (layout == "3.5") == (k.layout == "3.5")
}

// kindsFor are the kinds an admin target runs with: all of them when its layout is
// not known yet.
func kindsFor(target adminTarget, kinds []*execKind) []*execKind {
	if target.layout == "" {
		return kinds
	}
	var out []*execKind
	for _, k := range kinds {
		if serves(target.layout, k) {
			out = append(out, k)
		}
	}
	return out
}

// admins are the admin columns for the executor kinds of the run: our admin on the 3.4
// layout for executors before 3.5, and on the 3.5 layout ("ours-3.5") for 3.5 ones.
func (s *suite) admins(kinds []*execKind) []adminTarget {
	cfg := s.cfg
	if cfg.adminURL != "" {
		return []adminTarget{{name: cfg.adminName, check: func() string { return "" },
			start: func(t *testing.T) (*admin, error) { return externalAdmin(t, cfg) }}}
	}
	var targets []adminTarget
	if slices.Contains(cfg.admins, "ours") {
		for _, layout := range []string{"3.4", "3.5"} {
			if !slices.ContainsFunc(kinds, func(k *execKind) bool { return serves(layout, k) }) {
				continue
			}
			name := "ours"
			if layout == "3.5" {
				name = "ours-3.5"
			}
			targets = append(targets, adminTarget{name: name, layout: layout, check: func() string { return "" },
				start: func(t *testing.T) (*admin, error) { return startOurs(t, cfg.token, cfg.postgres, layout) }})
		}
	}
	// The official image runs on MySQL only.
	if slices.Contains(cfg.admins, "java") && !cfg.postgres {
		for _, image := range cfg.javaPeerAdmins {
			targets = append(targets, javaAdminTarget(s, image))
		}
		targets = append(targets, javaJarTargets(s)...)
	}
	return targets
}

func (s *suite) kinds() []*execKind {
	cfg := s.cfg
	all := []*execKind{nodeKind(), standinKind(), pythonKind()}
	for _, v := range cfg.javaVersions {
		k := javaKind(s, v)
		if strings.HasPrefix(v, "2.") {
			k = mariaDBOnly(cfg, k, "the 2.x Java executor runs on MariaDB only; on PostgreSQL java-3.3.2 and the Node executor cover the protocols before 3.5")
		}
		all = append(all, k)
	}
	if cfg.execCmd != "" {
		all = append(all, cmdKind(cfg.execCmd, cfg.execName, cfg.execProfile))
	}
	if len(cfg.executors) == 0 {
		return all
	}
	var out []*execKind
	for _, k := range all {
		for _, want := range cfg.executors {
			if k.name == want || (want == "java" && strings.HasPrefix(k.name, "java-")) {
				out = append(out, k)
			}
		}
	}
	return out
}

// TestConformance runs every scenario for every admin × executor kind, our admin on
// MariaDB (or MySQL), and writes the parity report.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes minutes; skipped with -short")
	}
	t.Parallel()
	runSuite(t, loadConfig(t))
}

// TestConformancePostgres runs the scenarios again with our admin on a fresh schema of
// the PostgreSQL server of XXL_TEST_POSTGRES_DSN, beside TestConformance, and writes
// its own report (report-postgres.md). The 12-minute lost-job scenario stays with
// TestConformance; the store suite runs the lost-job monitor's statements on
// PostgreSQL.
func TestConformancePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes minutes; skipped with -short")
	}
	cfg := loadConfig(t)
	if cfg.adminURL != "" {
		t.Skip("XXL_CONFORMANCE_ADMIN_URL names a running admin; TestConformance tests it")
	}
	if !slices.Contains(cfg.admins, "ours") {
		t.Skip("XXL_CONFORMANCE_ADMINS leaves out ours, the only admin run on PostgreSQL here")
	}
	schematest.PostgresConfig(t) // skips with one line when no server answers
	t.Parallel()
	cfg.postgres = true
	cfg.report = postgresReport(cfg.report)
	runSuite(t, cfg)
}

// postgresReport is the PostgreSQL run's report path: XXL_CONFORMANCE_REPORT with
// "-postgres" before its extension.
func postgresReport(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-postgres" + ext
}

// runSuite runs every scenario for every admin × executor kind of cfg and writes the
// parity report.
func runSuite(t *testing.T, cfg *config) {
	listen := "127.0.0.1"
	if cfg.relayHost != "" {
		listen = "0.0.0.0"
	} else {
		cfg.relayHost = "127.0.0.1"
	}
	s := &suite{cfg: cfg, relay: startRelay(t, listen), rep: newReport(cfg)}
	started := time.Now()
	t.Cleanup(func() {
		path, err := s.rep.write(time.Since(started))
		if err != nil {
			t.Errorf("parity report: %v", err)
			return
		}
		t.Logf("parity report written to %s", path)
	})
	all := s.kinds()
	for _, k := range all {
		if k.detect != nil {
			k.detect(t)
		}
	}
	for _, target := range s.admins(all) {
		kinds := kindsFor(target, all)
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			if why := target.check(); why != "" {
				s.rep.skipAll(target.name, kinds, why)
				t.Skip(why)
			}
			a, err := target.start(t)
			if err != nil {
				s.rep.failAll(target.name, kinds, "admin did not start: "+oneLine(err.Error()))
				t.Fatalf("admin %s: %v", target.name, err)
			}
			for _, k := range kinds {
				t.Run(k.name, func(t *testing.T) {
					t.Parallel()
					if !serves(a.layout, k) {
						why := fmt.Sprintf("the admin speaks the protocol of its database's %s layout, the executor that of %s (they do not interoperate, wire-protocol.md §10)",
							a.layout, protocolOf(k))
						s.rep.skipKind(a.name, k.name, why)
						t.Skip(why)
					}
					if why := k.check(); why != "" {
						s.rep.skipKind(a.name, k.name, why)
						t.Skip(why)
					}
					for _, sc := range scenarios {
						if cfg.scenarios != nil && !cfg.scenarios.MatchString(sc.id) {
							continue
						}
						t.Run(sc.id, func(t *testing.T) {
							t.Parallel()
							x := newCell(t, s, a, k, sc)
							sc.run(x)
						})
					}
				})
			}
		})
	}
}

// protocolOf names the protocol line of an executor kind.
func protocolOf(k *execKind) string {
	if k.layout == "3.5" {
		return "3.5"
	}
	return "2.x–3.4"
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// result is one row of the report.
type result struct {
	scenario, kind, admin string
	status                string // pass, fail, skip
	reason                string
	notes                 []string
}

type report struct {
	cfg  *config
	mu   sync.Mutex
	rows []*result
}

func newReport(cfg *config) *report { return &report{cfg: cfg} }

func (r *report) add(res *result) {
	r.mu.Lock()
	r.rows = append(r.rows, res)
	r.mu.Unlock()
}

func (r *report) skipAll(adminName string, kinds []*execKind, why string) {
	for _, k := range kinds {
		r.skipKind(adminName, k.name, why)
	}
}

// failAll fails every scenario of an admin that did not start, except with executor
// kinds that could not have run anyway.
func (r *report) failAll(adminName string, kinds []*execKind, why string) {
	for _, k := range kinds {
		if skip := k.check(); skip != "" {
			r.skipKind(adminName, k.name, skip)
			continue
		}
		for _, sc := range scenarios {
			if r.cfg.scenarios != nil && !r.cfg.scenarios.MatchString(sc.id) {
				continue
			}
			r.add(&result{scenario: sc.id, kind: k.name, admin: adminName, status: "fail", reason: why})
		}
	}
}

func (r *report) skipKind(adminName, kind, why string) {
	for _, sc := range scenarios {
		if r.cfg.scenarios != nil && !r.cfg.scenarios.MatchString(sc.id) {
			continue
		}
		r.add(&result{scenario: sc.id, kind: kind, admin: adminName, status: "skip", reason: why})
	}
}

// write renders the matrix: one row per scenario, one column per executor kind and
// admin, each cell pass / FAIL / skip with a numbered note saying why (notes shared
// by many cells, such as "no Docker engine", are numbered once).
func (r *report) write(took time.Duration) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type col struct{ kind, admin string }
	var cols []col
	cells := map[string]map[col]*result{}
	counts := map[string]int{}
	for _, res := range r.rows {
		c := col{res.kind, res.admin}
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
		if cells[res.scenario] == nil {
			cells[res.scenario] = map[col]*result{}
		}
		cells[res.scenario][c] = res
		counts[res.status]++
	}
	// Ours first, then the Java admin; the Node executor first, then Java, then others.
	rank := func(s, first string) string {
		if s == first {
			return "0"
		}
		if strings.HasPrefix(s, first+"-") {
			return "0" + s
		}
		if strings.HasPrefix(s, "java-") {
			return "1" + s
		}
		return "2" + s
	}
	slices.SortStableFunc(cols, func(a, b col) int {
		if a.admin != b.admin {
			return strings.Compare(rank(a.admin, "ours"), rank(b.admin, "ours"))
		}
		return strings.Compare(rank(a.kind, "node"), rank(b.kind, "node"))
	})
	var notes []string
	noteNo := func(text string) int {
		if i := slices.Index(notes, text); i >= 0 {
			return i + 1
		}
		notes = append(notes, text)
		return len(notes)
	}
	var b strings.Builder
	title, test := "parity report", "TestConformance"
	if r.cfg.postgres {
		title, test = "parity report, our admin on PostgreSQL", "TestConformancePostgres"
	}
	fmt.Fprintf(&b, "# xxl-job conformance: %s\n\n", title)
	fmt.Fprintf(&b, "Generated %s by %s (`go test ./conformance/...`) in %s: %d pass, %d fail, %d skip.\n",
		time.Now().Format(time.RFC3339), test, took.Round(time.Second), counts["pass"], counts["fail"], counts["skip"])
	fmt.Fprintf(&b, "Columns are executor @ admin; scenarios are explained in conformance/README.md.\n\n")
	b.WriteString("| scenario |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s @ %s |", c.kind, c.admin)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, sc := range scenarios {
		row, ok := cells[sc.id]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "| `%s` %s |", sc.id, sc.title)
		for _, c := range cols {
			res := row[c]
			if res == nil {
				b.WriteString(" – |")
				continue
			}
			cell := map[string]string{"pass": "pass", "fail": "**FAIL**", "skip": "skip"}[res.status]
			var refs []string
			if res.reason != "" {
				refs = append(refs, fmt.Sprint(noteNo(res.reason)))
			}
			for _, n := range res.notes {
				refs = append(refs, fmt.Sprint(noteNo(n)))
			}
			if len(refs) > 0 {
				cell += " (" + strings.Join(refs, ",") + ")"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for i, n := range notes {
			fmt.Fprintf(&b, "%d. %s\n", i+1, mdCell(n))
		}
	}
	return r.cfg.report, os.WriteFile(r.cfg.report, []byte(b.String()), 0o644)
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	return s
}
