package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// console is a logged-in session on the admin's web console (admin-http.md). It speaks
// both dialects: 2.x–3.2 (/login or /auth/doLogin, ReturnT `content`, jobinfo/add) and
// 3.3+ (/auth/doLogin, Response `data`, jobinfo/insert).
type console struct {
	a       *admin
	hc      *http.Client
	v3      bool // Response envelope: 3.3+ paths
	missing int  // HTTP status of a path the admin does not serve

	mu     sync.Mutex
	probed map[string]bool
}

// console logs in once per admin; why says what is missing when it cannot.
func (a *admin) console() (*console, string) {
	a.consoleOnce.Do(func() { a.con, a.conWhy = openConsole(a) })
	return a.con, a.conWhy
}

func openConsole(a *admin) (*console, string) {
	jar, _ := cookiejar.New(nil)
	c := &console{a: a, probed: map[string]bool{},
		hc: &http.Client{Jar: jar, Timeout: 15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	status, _, err := c.post("/conformance-no-such-endpoint", nil)
	if err != nil {
		return nil, "console: " + err.Error()
	}
	c.missing = status
	form := url.Values{"userName": {a.user}, "password": {a.pass}}
	for _, path := range []string{"/login", "/auth/doLogin"} {
		status, body, err := c.post(path, form)
		if err != nil {
			return nil, "console login: " + err.Error()
		}
		if status == c.missing || status == http.StatusNotFound {
			continue
		}
		env, ok := decodeEnvelope(body)
		if !ok {
			return nil, fmt.Sprintf("console login POST %s answered HTTP %d without an envelope", a.contextPath+path, status)
		}
		if env.Code != 200 {
			return nil, fmt.Sprintf("console login POST %s refused %s: %s", a.contextPath+path, a.user, env.msg())
		}
		c.v3 = strings.Contains(string(body), `"data"`)
		return c, ""
	}
	return nil, fmt.Sprintf("admin serves no console login (POST %s/login and %s/auth/doLogin answer HTTP %d)", a.contextPath, a.contextPath, c.missing)
}

func (c *console) post(path string, form url.Values) (int, []byte, error) {
	resp, err := c.hc.PostForm(c.a.base()+path, form)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// has reports whether the admin serves a console path (probed once, without parameters,
// which every console endpoint refuses without side effects).
func (c *console) has(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, seen := c.probed[path]; seen {
		return ok
	}
	status, _, err := c.post(path, nil)
	ok := err == nil && status != c.missing && status != http.StatusNotFound
	c.probed[path] = ok
	return ok
}

// call posts a form and decodes the envelope; code != 200 is an error.
func (c *console) call(path string, form url.Values) (envelope, error) {
	status, body, err := c.post(path, form)
	if err != nil {
		return envelope{}, fmt.Errorf("POST %s: %w", path, err)
	}
	if status != 200 {
		return envelope{}, fmt.Errorf("POST %s: HTTP %d %s", path, status, truncate(string(body), 200))
	}
	env, ok := decodeEnvelope(body)
	if !ok {
		return envelope{}, fmt.Errorf("POST %s: not an envelope: %s", path, truncate(string(body), 200))
	}
	if env.Code != 200 {
		return env, fmt.Errorf("POST %s: code %d: %s", path, env.Code, env.msg())
	}
	return env, nil
}

func (c *console) groupInsert() string {
	if c.v3 {
		return "insert"
	}
	return "save"
}

func (c *console) jobInsert() string {
	if c.v3 {
		return "insert"
	}
	return "add"
}

// addGroup creates a group; token is its access token on the 3.5 layout ("" before).
func (c *console) addGroup(app, title string, addressType int, addressList, token string) error {
	form := url.Values{
		"appname": {app}, "title": {title}, "name": {title},
		"addressType": {strconv.Itoa(addressType)}, "addressList": {addressList},
	}
	if token != "" {
		form.Set("accessToken", token)
	}
	_, err := c.call("/jobgroup/"+c.groupInsert(), form)
	return err
}

// addJob creates a stopped job and returns its id (the payload is the id as a string).
func (c *console) addJob(j jobSpec) (int, error) {
	env, err := c.call("/jobinfo/"+c.jobInsert(), url.Values{
		"jobGroup": {strconv.Itoa(j.group)}, "jobDesc": {j.desc}, "name": {j.desc}, "author": {"conformance"},
		"alarmEmail": {""}, "scheduleType": {j.scheduleType}, "scheduleConf": {j.scheduleConf},
		"misfireStrategy": {j.misfire}, "executorRouteStrategy": {j.route}, "executorHandler": {j.handler},
		"executorParam": {j.param}, "executorBlockStrategy": {j.block}, "executorTimeout": {strconv.Itoa(j.timeout)},
		"executorFailRetryCount": {strconv.Itoa(j.retry)}, "glueType": {"BEAN"}, "glueSource": {""},
		"glueRemark": {"GLUE代码初始化"}, "childJobId": {j.child},
	})
	if err != nil {
		return 0, err
	}
	var s string
	if err := json.Unmarshal(env.payload(), &s); err != nil {
		var n int
		if err2 := json.Unmarshal(env.payload(), &n); err2 != nil {
			return 0, fmt.Errorf("job id in %s: %w", env.payload(), err)
		}
		return n, nil
	}
	return strconv.Atoi(s)
}

// trigger is "trigger once" with a parameter and an optional address override.
func (c *console) trigger(jobID int, param, addressList string) error {
	_, err := c.call("/jobinfo/trigger", url.Values{"id": {strconv.Itoa(jobID)}, "executorParam": {param}, "addressList": {addressList}})
	return err
}

// kill asks the admin to kill a running log.
func (c *console) kill(logID int64) (envelope, error) {
	return c.call("/joblog/logKill", url.Values{"id": {strconv.FormatInt(logID, 10)}})
}

// logChunk is the rolling log as the console relays it (admin-http.md §7.5).
type logChunk struct {
	FromLineNum int    `json:"fromLineNum"`
	ToLineNum   int    `json:"toLineNum"`
	LogContent  string `json:"logContent"`
	End         bool   `json:"end"`
}

func (c *console) logCat(logID int64, from int) (logChunk, error) {
	env, err := c.call("/joblog/logDetailCat", url.Values{"logId": {strconv.FormatInt(logID, 10)}, "fromLineNum": {strconv.Itoa(from)}})
	if err != nil {
		return logChunk{}, err
	}
	var ch logChunk
	if err := json.Unmarshal(env.payload(), &ch); err != nil {
		return logChunk{}, fmt.Errorf("log chunk %s: %w", truncate(string(env.payload()), 200), err)
	}
	return ch, nil
}

// consoleFor is the console to create groups and jobs with, or nil to use the database
// (XXL_CONFORMANCE_JOBS=db, or auto without a console).
func (x *cell) consoleFor(a *admin) *console {
	x.Helper()
	if x.s.cfg.jobsVia == "db" {
		return nil
	}
	c, why := a.console()
	if c == nil && x.s.cfg.jobsVia == "console" {
		x.Fatalf("XXL_CONFORMANCE_JOBS=console: %s", why)
	}
	return c
}

// requireConsole returns the console serving every path, or skips the scenario naming
// the first path the admin does not serve. Our own admin serves them all: there a
// missing console or endpoint fails the scenario.
func (x *cell) requireConsole(paths ...string) *console {
	x.Helper()
	skip := x.Skipf
	if x.a.ours {
		skip = x.Fatalf
	}
	c, why := x.a.console()
	if c == nil {
		skip("needs the console: %s", why)
		return nil
	}
	for _, p := range paths {
		if !c.has(p) {
			skip("needs console endpoint POST %s%s, which the admin does not serve (HTTP %d)", x.a.contextPath, p, c.missing)
			return nil
		}
	}
	return c
}
