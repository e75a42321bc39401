package scheduler

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// dashboardFile is the sample Grafana dashboard shipped in docs/ (docs/PERFORMANCE.md,
// "Metrics and the Grafana dashboard").
const dashboardFile = "../docs/grafana-dashboard.json"

// The sample dashboard must not rot: every metric and label its queries use must be on
// the admin's /metrics, and every xxl_admin_* metric must have a panel. The registry is
// built as cmd/xxl-admin-go's serve builds it (Go runtime, process and the scheduler's
// collectors) and scraped over HTTP in the text format Prometheus reads.
func TestGrafanaDashboardMatchesMetrics(t *testing.T) {
	exposed := scrapeMetrics(t)

	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Inputs []struct {
			Name, Type, PluginID string
		} `json:"__inputs"`
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string          `json:"name"`
				Datasource json.RawMessage `json:"datasource"`
				Definition string          `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		UID   string `json:"uid"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard needs a uid and a title")
	}
	if !slices.ContainsFunc(d.Inputs, func(in struct{ Name, Type, PluginID string }) bool {
		return in.Name == "DS_PROMETHEUS" && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Errorf("__inputs must declare DS_PROMETHEUS, a prometheus datasource: %+v", d.Inputs)
	}

	var exprs []string
	ids := map[int]bool{}
	var walk func(ps []dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if p.Datasource.UID != "${DS_PROMETHEUS}" {
				t.Errorf("panel %q: datasource %q, want the ${DS_PROMETHEUS} input", p.Title, p.Datasource.UID)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" || tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("panel %q: target %+v needs an expr and a unique refId", p.Title, tg)
				}
				refs[tg.RefID] = true
				exprs = append(exprs, tg.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if !strings.Contains(string(v.Datasource), "${DS_PROMETHEUS}") {
			t.Errorf("variable %q: datasource %s, want the ${DS_PROMETHEUS} input", v.Name, v.Datasource)
		}
		// label_values(metric, label): the metric must exist and have the label.
		inner, ok := strings.CutPrefix(v.Definition, "label_values(")
		metric, label, ok2 := strings.Cut(strings.TrimSuffix(inner, ")"), ",")
		if !ok || !ok2 {
			t.Errorf("variable %q: definition %q, want label_values(metric, label)", v.Name, v.Definition)
			continue
		}
		exprs = append(exprs, metric)
		label = strings.TrimSpace(label)
		if fam, ok := exposed.series[strings.TrimSpace(metric)]; !ok || (!fam.labels[label] && label != "instance" && label != "job") {
			t.Errorf("variable %q: %s has no label %q on /metrics", v.Name, metric, label)
		}
	}

	used := map[string]bool{}
	for _, e := range exprs {
		sels, grouping, err := promqlRefs(e)
		if err != nil {
			t.Errorf("query %q: %v", e, err)
			continue
		}
		if len(sels) == 0 {
			t.Errorf("query %q names no metric", e)
		}
		labels := map[string]bool{"instance": true, "job": true} // added by Prometheus to every target
		for _, s := range sels {
			fam, ok := exposed.series[s.name]
			if !ok {
				t.Errorf("query %q: %s is not on /metrics", e, s.name)
				continue
			}
			used[fam.family] = true
			for l := range fam.labels {
				labels[l] = true
			}
			for _, l := range s.labels {
				if !fam.labels[l] && l != "instance" && l != "job" {
					t.Errorf("query %q: %s has no label %q (it has %v)", e, s.name, l, keys(fam.labels))
				}
			}
		}
		for _, l := range grouping {
			if !labels[l] {
				t.Errorf("query %q: groups by %q, which none of its metrics has", e, l)
			}
		}
	}
	for fam := range exposed.families {
		if strings.HasPrefix(fam, "xxl_admin_") && !used[fam] {
			t.Errorf("%s is on /metrics but no panel of %s shows it", fam, dashboardFile)
		}
	}
}

type dashPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// scraped is what a /metrics scrape shows: each queryable series name (a histogram's
// _bucket, _sum, _count) with its family and label names.
type scraped struct {
	families map[string]string // family → type
	series   map[string]seriesInfo
}

type seriesInfo struct {
	family string
	labels map[string]bool
}

// scrapeMetrics registers what serve registers, records one sample of every labelled
// xxl_admin series (as the running admin does), and reads /metrics over HTTP.
func scrapeMetrics(t *testing.T) scraped {
	t.Helper()
	s := New(Config{}, nil, nil, nil)
	now := time.Now()
	s.metrics.triggered(true, now.UnixMilli()-250, now)
	s.metrics.triggered(false, 0, now)
	s.metrics.misfire()
	s.metrics.callback()
	s.metrics.dbError("scan")
	p := s.metrics.prom
	p.executors.WithLabelValues("sample-app").Set(2)
	p.leftOut.WithLabelValues("sample-app").Set(0)
	p.execCall.WithLabelValues("run").Observe(0.004)
	p.scanDur.Observe(0.02)
	p.scanJobs.Observe(40)
	p.lockWait.Observe(0.001)
	p.takenOver.Add(1)
	p.staleFires.WithLabelValues("skipped").Add(1)
	s.metrics.alarm("mail", "ok")

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(s.Collectors()...)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := parseExposition(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	// Every collector of the scheduler must show up; a new labelled metric needs a
	// sample recorded above, and then a panel.
	described := 0
	for _, c := range s.Collectors() {
		ch := make(chan *prometheus.Desc, 16)
		c.Describe(ch)
		close(ch)
		for range ch {
			described++
		}
	}
	n := 0
	for fam := range out.families {
		if strings.HasPrefix(fam, "xxl_admin_") {
			n++
		}
	}
	if n != described {
		t.Fatalf("the scheduler describes %d metrics but /metrics shows %d xxl_admin_ families %v: record a sample of the new one in scrapeMetrics",
			described, n, keys(out.families))
	}
	for _, want := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := out.families[want]; !ok {
			t.Fatalf("/metrics lacks %s: the runtime collectors are not registered as serve does", want)
		}
	}
	return out
}

// parseExposition reads the Prometheus text format: # TYPE lines and samples.
func parseExposition(r io.Reader) (scraped, error) {
	out := scraped{families: map[string]string{}, series: map[string]seriesInfo{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			out.families[name] = typ
			names := []string{name}
			switch typ {
			case "histogram":
				names = []string{name + "_bucket", name + "_sum", name + "_count"}
			case "summary":
				names = []string{name, name + "_sum", name + "_count"}
			}
			for _, n := range names {
				out.series[n] = seriesInfo{family: name, labels: map[string]bool{}}
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			continue
		}
		info, ok := out.series[line[:end]]
		if !ok {
			continue
		}
		if line[end] == '{' {
			sels, _, err := promqlRefs("x" + line[end:strings.LastIndexByte(line, '}')+1])
			if err != nil || len(sels) != 1 {
				return out, err
			}
			for _, l := range sels[0].labels {
				info.labels[l] = true
			}
		}
	}
	return out, sc.Err()
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// promSel is a vector selector of a PromQL query: the metric name and the label names
// of its matchers.
type promSel struct {
	name   string
	labels []string
}

// promqlRefs lists the metric selectors of a PromQL expression and the label names of
// its by/without/on/ignoring/group_left/group_right clauses. It is a lexer, not a
// parser: enough for the dashboard's queries (functions, aggregations, binary
// operators, ranges, Grafana $variables), and it refuses what it does not understand.
func promqlRefs(expr string) (sels []promSel, grouping []string, err error) {
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"inf": true, "nan": true, "atan2": true}
	aggregators := map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true,
		"stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
		"limitk": true, "limit_ratio": true}
	groupers := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
	isIdent := func(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }
	s := expr
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	ident := func() string {
		j := i
		for i < len(s) && isIdent(s[i]) {
			i++
		}
		return s[j:i]
	}
	skipString := func() error {
		q := s[i]
		for i++; i < len(s); i++ {
			if s[i] == '\\' && q != '`' {
				i++
				continue
			}
			if s[i] == q {
				i++
				return nil
			}
		}
		return errUnterminated
	}
	// matchers reads {name op "value", …} and returns the label names.
	matchers := func() ([]string, error) {
		var names []string
		i++ // '{'
		for {
			skipSpace()
			if i >= len(s) {
				return nil, errUnterminated
			}
			if s[i] == '}' {
				i++
				return names, nil
			}
			if s[i] == ',' {
				i++
				continue
			}
			if !isIdentStart(s[i]) {
				return nil, errSyntax
			}
			names = append(names, ident())
			skipSpace()
			if i < len(s) && (s[i] == '=' || s[i] == '!') {
				i++
				if i < len(s) && (s[i] == '=' || s[i] == '~') {
					i++
				}
			} else {
				return nil, errSyntax
			}
			skipSpace()
			if i >= len(s) || (s[i] != '"' && s[i] != '\'' && s[i] != '`') {
				return nil, errSyntax
			}
			if err := skipString(); err != nil {
				return nil, err
			}
		}
	}
	for {
		skipSpace()
		if i >= len(s) {
			return sels, grouping, nil
		}
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := skipString(); err != nil {
				return nil, nil, err
			}
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, nil, errUnterminated
			}
			i += j + 1
		case c == '$': // Grafana variable: $name or ${name}
			i++
			if i < len(s) && s[i] == '{' {
				j := strings.IndexByte(s[i:], '}')
				if j < 0 {
					return nil, nil, errUnterminated
				}
				i += j + 1
			} else {
				ident()
			}
		case c == '{':
			names, err := matchers()
			if err != nil {
				return nil, nil, err
			}
			sels = append(sels, promSel{labels: names}) // {__name__=…}: no name we can check
		case '0' <= c && c <= '9' || c == '.':
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentStart(c):
			name := ident()
			skipSpace()
			next := byte(0)
			if i < len(s) {
				next = s[i]
			}
			switch {
			case groupers[name] && next == '(':
				j := strings.IndexByte(s[i:], ')')
				if j < 0 {
					return nil, nil, errUnterminated
				}
				for _, l := range strings.Split(s[i+1:i+j], ",") {
					if l = strings.TrimSpace(l); l != "" {
						grouping = append(grouping, l)
					}
				}
				i += j + 1
			case groupers[name] || keywords[name]:
			case next == '(': // a function or an aggregation
			case aggregators[name] && (strings.HasPrefix(s[i:], "by") || strings.HasPrefix(s[i:], "without")):
				// sum by (…) (…): the clause is read next
			default:
				sel := promSel{name: name}
				if next == '{' {
					if sel.labels, err = matchers(); err != nil {
						return nil, nil, err
					}
				}
				sels = append(sels, sel)
			}
		case strings.IndexByte("()+-*/%^=!<>,", c) >= 0:
			i++
		default:
			return nil, nil, errSyntax
		}
	}
}

type promqlError string

func (e promqlError) Error() string { return string(e) }

const (
	errUnterminated = promqlError("unterminated string, range, matcher or variable")
	errSyntax       = promqlError("unexpected character")
)

// The lexer behind the dashboard check finds metric names and labels where PromQL puts
// them and nowhere else, so the check can fail.
func TestPromqlRefs(t *testing.T) {
	for _, c := range []struct {
		expr     string
		sels     []promSel
		grouping []string
	}{
		{`histogram_quantile(0.99, sum by (le, endpoint) (rate(xxl_admin_executor_call_seconds_bucket{instance=~"$instance"}[$__rate_interval])))`,
			[]promSel{{"xxl_admin_executor_call_seconds_bucket", []string{"instance"}}}, []string{"le", "endpoint"}},
		{`60 * sum(rate(a_total{x="1",y!~"a,b}"}[5m] offset 1h)) by (loop) / on(instance) group_left b`,
			[]promSel{{"a_total", []string{"x", "y"}}, {"b", nil}}, []string{"loop", "instance"}},
		{`1 - sum(rate(m_bucket{le="1"}[1m])) / sum(rate(m_count[1m])) > bool 0.5e1`,
			[]promSel{{"m_bucket", []string{"le"}}, {"m_count", nil}}, nil},
		{`go_goroutines`, []promSel{{"go_goroutines", nil}}, nil},
		{`label_values(xxl_admin_ring_fires, instance)`, []promSel{{"xxl_admin_ring_fires", nil}, {"instance", nil}}, nil},
	} {
		sels, grouping, err := promqlRefs(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !slices.EqualFunc(sels, c.sels, func(a, b promSel) bool { return a.name == b.name && slices.Equal(a.labels, b.labels) }) ||
			!slices.Equal(grouping, c.grouping) {
			t.Errorf("%s:\n got %v %v\nwant %v %v", c.expr, sels, grouping, c.sels, c.grouping)
		}
	}
	for _, bad := range []string{`rate(x{a="1"[5m])`, `x{a="1}`, `x[5m`, `x @ 1`} {
		if _, _, err := promqlRefs(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
