package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// fuzzPaths are the console endpoints whose parameters the fuzzer writes. The manual
// trigger is left out: it would send requests to whatever addresses the fuzzer stored.
var fuzzPaths = []string{
	"/jobinfo/pageList", "/jobinfo/add", "/jobinfo/insert", "/jobinfo/update", "/jobinfo/remove", "/jobinfo/delete",
	"/jobinfo/start", "/jobinfo/stop", "/jobinfo/nextTriggerTime", "/chartInfo",
	"/jobgroup/pageList", "/jobgroup/save", "/jobgroup/insert", "/jobgroup/update", "/jobgroup/remove",
	"/jobgroup/delete", "/jobgroup/loadById", "/jobgroup/drain", "/jobgroup/undrain",
	"/joblog/pageList", "/joblog/getJobsByGroup", "/joblog/logDetailCat", "/joblog/logKill", "/joblog/clearLog",
	"/jobcode/save",
	"/user/pageList", "/user/add", "/user/insert", "/user/update", "/user/remove", "/user/delete",
	"/user/updatePwd", "/auth/updatePwd",
}

// fuzzSeeds pair an endpoint with a body as the 2.4.2 and 3.4.2 consoles post it
// (admin-http.md §5.1–5.6).
var fuzzSeeds = []struct{ path, body string }{
	{"/jobinfo/pageList", "jobGroup=1&triggerStatus=-1&jobDesc=&executorHandler=&author=&start=0&length=10"},
	{"/jobinfo/pageList", "jobGroup=1&triggerStatus=-1&jobDesc=&executorHandler=&author=&offset=0&pagesize=10"},
	{"/jobinfo/add", "jobGroup=1&jobDesc=%E6%B5%8B%E8%AF%95&author=XXL&alarmEmail=&scheduleType=CRON&scheduleConf=0+0+0+*+*+%3F&cronGen_display=0+0+0+*+*+%3F&schedule_conf_CRON=0+0+0+*+*+%3F&executorHandler=demoJobHandler&executorParam=&executorRouteStrategy=FIRST&childJobId=&misfireStrategy=DO_NOTHING&executorBlockStrategy=SERIAL_EXECUTION&executorTimeout=0&executorFailRetryCount=0&glueType=BEAN&glueSource=&glueRemark=GLUE%E4%BB%A3%E7%A0%81%E5%88%9D%E5%A7%8B%E5%8C%96"},
	{"/jobinfo/insert", "jobGroup=1&jobDesc=demo&author=XXL&alarmEmail=a%40b.c&scheduleType=FIX_RATE&scheduleConf=30&executorHandler=&executorParam=&executorRouteStrategy=ROUND&childJobId=1&misfireStrategy=FIRE_ONCE_NOW&executorBlockStrategy=DISCARD_LATER&executorTimeout=5&executorFailRetryCount=1&glueType=GLUE_SHELL&glueSource=%23!%2Fbin%2Fbash%0Aecho+hi&glueRemark=init"},
	{"/jobinfo/update", "id=1&jobGroup=1&jobDesc=demo&author=XXL&alarmEmail=&scheduleType=CRON&scheduleConf=0+*%2F5+*+*+*+%3F&executorHandler=demoJobHandler&executorParam=&executorRouteStrategy=FIRST&childJobId=&misfireStrategy=DO_NOTHING&executorBlockStrategy=SERIAL_EXECUTION&executorTimeout=0&executorFailRetryCount=0"},
	{"/jobinfo/remove", "id=99"}, {"/jobinfo/delete", "ids%5B%5D=99"},
	{"/jobinfo/start", "id=1"}, {"/jobinfo/stop", "ids%5B%5D=1"},
	{"/jobinfo/nextTriggerTime", "scheduleType=CRON&scheduleConf=0+0+0+*+*+%3F"},
	{"/jobinfo/nextTriggerTime", "scheduleType=FIX_RATE&scheduleConf=-1"},
	{"/chartInfo", "startDate=2024-01-01+00%3A00%3A00&endDate=2024-01-07+23%3A59%3A59"},
	{"/chartInfo", "startDate=2024-13-45+99%3A00%3A00&endDate=x"},
	{"/jobgroup/pageList", "appname=&title=&start=0&length=10"},
	{"/jobgroup/save", "appname=xxl-job-executor-two&title=two&addressType=0&addressList="},
	{"/jobgroup/insert", "appname=manual-group&title=manual&addressType=1&addressList=http%3A%2F%2F127.0.0.1%3A9%2F"},
	{"/jobgroup/update", "id=1&appname=xxl-job-executor-sample&title=sample&addressType=0&addressList="},
	{"/jobgroup/remove", "id=99"}, {"/jobgroup/delete", "ids%5B%5D=1&ids%5B%5D=2"}, {"/jobgroup/loadById", "id=1"},
	{"/jobgroup/drain", "id=1&address=http%3A%2F%2F127.0.0.1%3A9%2F"}, {"/jobgroup/undrain", "id=1&address=%00%ff"},
	{"/joblog/pageList", "jobGroup=1&jobId=0&logStatus=-1&filterTime=2024-01-01+00%3A00%3A00+-+2024-01-31+23%3A59%3A59&start=0&length=10"},
	{"/joblog/pageList", "jobGroup=0&jobId=1&logStatus=2&filterTime=&offset=0&pagesize=10"},
	{"/joblog/getJobsByGroup", "jobGroup=1"},
	{"/joblog/logDetailCat", "logId=1&fromLineNum=1"},
	{"/joblog/logKill", "id=1"},
	{"/joblog/clearLog", "jobGroup=1&jobId=0&type=1"},
	{"/jobcode/save", "id=1&glueSource=print(1)&glueRemark=v2"},
	{"/user/pageList", "username=&role=-1&start=0&length=10"},
	{"/user/add", "username=ops1&password=123456&role=0&permission=1"},
	{"/user/insert", "username=ops2&password=123456&role=0&permission=1%2C2"},
	{"/user/update", "id=2&username=ops1&password=&role=1&permission="},
	{"/user/remove", "id=99"}, {"/user/delete", "ids%5B%5D=99"},
	{"/user/updatePwd", "password=abcdef"}, {"/auth/updatePwd", "oldPassword=abcdef&password=123456"},
}

// fuzzAdmin is the console test admin (3.4 layout, see setup) with a session for the
// seeded administrator and a count of recovered panics in its log.
type fuzzAdmin struct {
	*testBundle
	hc     *http.Client
	token  string
	panics atomic.Int64
}

// panicCounter counts log records that report a recovered panic.
type panicCounter struct {
	slog.Handler
	n *atomic.Int64
}

func (p panicCounter) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(strings.ToLower(r.Message), "panic") {
		p.n.Add(1)
	}
	return nil
}

func startFuzzAdmin(t testing.TB) *fuzzAdmin {
	a := &fuzzAdmin{hc: &http.Client{Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	log := slog.New(panicCounter{Handler: slog.NewTextHandler(io.Discard, nil), n: &a.panics})
	a.testBundle = setup(t, schema.Layout34, bundleOpts{log: log, loginFailures: 1 << 30})
	a.login(t)
	return a
}

// login restores the seeded administrator (the fuzzer may have changed or removed it)
// and signs in with 3.2+ /auth/doLogin.
func (a *fuzzAdmin) login(t testing.TB) {
	a.db.Exec(t, "DELETE FROM xxl_job_user WHERE username = 'admin' AND id <> 1")
	a.db.Exec(t, `INSERT INTO xxl_job_user (id, username, password, role, permission) VALUES (1, 'admin', ?, 1, NULL)
		ON DUPLICATE KEY UPDATE username = 'admin', password = VALUES(password), role = 1, token = NULL`,
		manage.HashPassword(a.store.Layout(), "123456"))
	res, err := a.hc.PostForm(a.base+"/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}})
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.Name == manage.TokenCookie {
			a.token = c.Value
		}
	}
	require.NotEmpty(t, a.token, "login: %s", body)
}

func (a *fuzzAdmin) post(t testing.TB, path, body string) (int, []byte) {
	req, err := http.NewRequest(http.MethodPost, a.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	req.AddCookie(&http.Cookie{Name: manage.TokenCookie, Value: a.token})
	res, err := a.hc.Do(req)
	require.NoError(t, err, "%s %q", path, body)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, b
}

// Any body posted to any console form endpoint, by a signed-in
// administrator, is answered HTTP 200 with a JSON envelope (code 200, or 500 with a
// message) or a paging map, or HTTP 400 with a failure envelope for text that is not
// UTF-8 or holds a NUL — never a panic, an HTML page or a 5xx.
func FuzzConsoleForms(f *testing.F) {
	idx := map[string]uint8{}
	for i, p := range fuzzPaths {
		idx[p] = uint8(i)
	}
	for _, s := range fuzzSeeds {
		i, ok := idx[s.path]
		require.True(f, ok, s.path)
		f.Add(i, s.body)
	}
	a := startFuzzAdmin(f)
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		status, b := a.post(t, path, body)
		if status == http.StatusBadRequest {
			require.Regexp(t, "is not valid UTF-8 text|may not hold a NUL character", string(b), "%s %q → %s", path, body, b)
		} else {
			require.Equal(t, http.StatusOK, status, "%s %q → %s", path, body, b)
		}
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &obj), "%s %q → %s", path, body, b)
		if raw, ok := obj["code"]; ok {
			var code int
			require.NoError(t, json.Unmarshal(raw, &code))
			require.Contains(t, []int{200, 500}, code, "%s %q → %s", path, body, b)
			if code == 500 {
				var msg string
				require.NoError(t, json.Unmarshal(obj["msg"], &msg), "%s %q → %s", path, body, b)
				require.NotEmpty(t, msg)
				if strings.HasPrefix(msg, "not login") {
					a.login(t) // the fuzzer changed the administrator's password or role
				}
			}
		} else {
			require.Contains(t, obj, "recordsTotal", "%s %q → %s", path, body, b)
		}
		require.Zero(t, a.panics.Load(), "%s %q", path, body)
	})
}
