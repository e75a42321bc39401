package routes_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"

	"github.com/gofiber/fiber/v2"
)

type testBundle struct {
	db    *schematest.DB
	store *schema.Store
	app   *fiber.App
}

func setup(t *testing.T, layout schema.LayoutName, token string) *testBundle {
	t.Helper()
	db, store := schematest.New(t, layout)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sched := scheduler.New(scheduler.Config{Location: db.Loc, Logger: log}, store,
		scheduler.HTTPExecutor{Client: executor.New(executor.Options{}), AccessToken: token}, clock.NewFake(time.Now()))
	t.Cleanup(func() { sched.Stop(context.Background()) })
	app := routes.NewApp(log)
	(&routes.API{Core: sched, AccessToken: token, Log: log}).Mount(app, "/xxl-job-admin", "")
	return &testBundle{db: db, store: store, app: app}
}

type envelope struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content"`
	Data    json.RawMessage `json:"data"`
}

func (b *testBundle) do(t *testing.T, req *http.Request) (int, envelope) {
	t.Helper()
	resp, err := b.app.Test(req, 5000)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env envelope
	require.NoError(t, json.Unmarshal(body, &env), "body %q", body)
	return resp.StatusCode, env
}

func post(path, body string, headers ...string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// recorded is one request an executor sent, parsed from a transcript file.
type recorded struct {
	file, method, path string
	header             http.Header
	body               string
}

func readTranscript(t *testing.T, file string) []recorded {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var out []recorded
	var cur *recorded
	inBody := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== END"):
			cur.body = strings.TrimSuffix(cur.body, "\n")
			out = append(out, *cur)
			cur, inBody = nil, false
		case strings.HasPrefix(line, "=== "):
			cur = &recorded{file: filepath.Base(file), header: http.Header{}}
		case cur != nil && cur.method == "":
			parts := strings.Fields(line)
			cur.method, cur.path = parts[0], parts[1]
		case cur != nil && !inBody && line == "":
			inBody = true
		case cur != nil && !inBody:
			k, v, _ := strings.Cut(line, ":")
			cur.header.Add(k, strings.TrimSpace(v))
		case cur != nil && inBody:
			cur.body += line + "\n"
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// Every request recorded from the four real executors (Java xxl-job-core 2.4.2 and
// 3.4.2, npm xxl-job, Go SDK; transcripts executor-*-requests.txt) is accepted with an
// envelope they all understand, under the 2.x context path and under "/" (3.4.1+), on
// both the 2.4 and 3.4 table layouts; registry rows and results land in the database.
func TestRecordedExecutorRequestsAreAccepted(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/executor-*-requests.txt")
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		for _, prefix := range []string{"/xxl-job-admin", ""} {
			t.Run(string(layout)+"/root="+prefix, func(t *testing.T) {
				t.Parallel()
				b := setup(t, layout, "default_token")
				ctx := context.Background()
				var calls int
				for _, file := range files {
					for _, i := range []int64{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 2001} {
						b.db.Exec(t, "DELETE FROM xxl_job_log WHERE id=?", i)
						b.db.Exec(t, "INSERT INTO xxl_job_log (id, job_group, job_id, trigger_time, trigger_code, handle_code) VALUES (?, 1, 1, NOW(), 200, 0)", i)
					}
					for _, rec := range readTranscript(t, file) {
						path := strings.TrimPrefix(rec.path, "/xxl-job-admin")
						req := httptest.NewRequest(rec.method, prefix+path, strings.NewReader(rec.body))
						req.Header = rec.header.Clone()
						status, env := b.do(t, req)
						require.Equal(t, http.StatusOK, status, "%s %s", rec.file, rec.path)
						require.Equal(t, 200, env.Code, "%s %s: %v", rec.file, rec.path, env.Msg)
						calls++
					}
					// Every callback of the file landed with the recorded code.
					for _, rec := range readTranscript(t, file) {
						if !strings.HasSuffix(rec.path, "/callback") {
							continue
						}
						var items []struct {
							LogID      int64 `json:"logId"`
							HandleCode int   `json:"handleCode"`
						}
						require.NoError(t, json.Unmarshal([]byte(rec.body), &items))
						for _, it := range items {
							l, err := b.store.LoadLog(ctx, it.LogID)
							require.NoError(t, err)
							require.Equal(t, it.HandleCode, l.HandleCode, "%s log %d", rec.file, it.LogID)
						}
					}
				}
				require.Greater(t, calls, 30)
				// Java and Go executors ended with registryRemove; the Node one registered
				// again afterwards. Repeated heartbeats never duplicate a row, also on the
				// 2.4 layout whose index is not unique.
				require.Equal(t, 1, b.db.Count(t, "xxl_job_registry", ""))
				require.Equal(t, 1, b.db.Count(t, "xxl_job_registry", "registry_value='http://127.0.0.1:19993/job'"))
			})
		}
	}
}

// wire-protocol.md §4.1 gatekeeping and §11 guidance: every refusal is HTTP 200 with a
// code 500 envelope and a clear message, never an HTML page or a panic.
func TestBadRequestsGetEnvelopes(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, "secret")
	tok := []string{"XXL-JOB-ACCESS-TOKEN", "secret"}
	reg := `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"}`
	cases := []struct {
		name string
		req  *http.Request
		msg  string
	}{
		{"GET", httptest.NewRequest(http.MethodGet, "/xxl-job-admin/api/registry", nil), "invalid request, HttpMethod not support."},
		{"no uri", post("/xxl-job-admin/api/", reg, tok...), "invalid request, uri-mapping empty."},
		{"empty body", post("/api/registry", "", tok...), "invalid request, requestBody empty."},
		{"missing token", post("/api/registry", reg), "The access token is wrong."},
		{"wrong token", post("/api/registry", reg, "XXL-JOB-ACCESS-TOKEN", "secreT"), "The access token is wrong."},
		{"unknown uri", post("/api/nope", reg, tok...), "invalid request, uri-mapping(nope) not found."},
		{"blank key", post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":" ","registryValue":"http://x/"}`, tok...), "Illegal Argument."},
		{"not json", post("/api/registry", `{"registryGroup":`, tok...), ""},
		{"file scheme", post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"file:///etc/passwd"}`, tok...), "invalid request, registryValue must be an http:// or https:// address"},
		{"key too long", post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"`+strings.Repeat("é", 256)+`","registryValue":"http://x/"}`, tok...), "invalid request, registryKey longer than 255 characters"},
		{"group too long", post("/api/registryRemove", `{"registryGroup":"`+strings.Repeat("G", 51)+`","registryKey":"app","registryValue":"http://x/"}`, tok...), "invalid request, registryGroup longer than 50 characters"},
		{"value too long", post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://x/`+strings.Repeat("v", 250)+`"}`, tok...), "invalid request, registryValue longer than 255 characters"},
		{"callback object", post("/api/callback", `{"logId":1}`, tok...), ""},
		{"callback bad code", post("/api/callback", `[{"logId":1,"handleCode":"abc"}]`, tok...), ""},
		{"callback null", post("/api/callback", `null`, tok...), ""},
	}
	for _, tc := range cases {
		status, env := b.do(t, tc.req)
		require.Equal(t, http.StatusOK, status, tc.name)
		require.Equal(t, 500, env.Code, tc.name)
		require.NotNil(t, env.Msg, tc.name)
		require.NotContains(t, *env.Msg, "\n", tc.name)
		if tc.msg != "" {
			require.Equal(t, tc.msg, *env.Msg, tc.name)
		} else {
			require.NotEmpty(t, *env.Msg, tc.name)
		}
	}
	// A lower-case header (Node SDK) and the 3.5 callback object form are fine.
	status, env := b.do(t, post("/api/callback", `{"callbackList":[{"logId":424242,"logDateTime":1,"handleCode":200}]}`, "xxl-job-access-token", "secret"))
	require.Equal(t, 200, status)
	require.Equal(t, 200, env.Code)

	// Over 5 MiB, over a real connection: refused with an envelope.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = b.app.Listener(ln) }()
	big := `[{"logId":1,"handleCode":200,"handleMsg":"` + strings.Repeat("x", 6<<20) + `"}]`
	resp, err := http.Post("http://"+ln.Addr().String()+"/api/callback", "application/json", strings.NewReader(big))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &env))
	require.Equal(t, 500, env.Code)
	require.Contains(t, *env.Msg, "5 MiB")
}

// A callback that cannot be stored is answered with failure, so the executor keeps it
// and retries (Java executors persist failed callbacks); a registry likewise.
func TestDatabaseDownAnswersFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, "")
	require.NoError(t, b.store.DB().Close())
	status, env := b.do(t, post("/api/callback", `[{"logId":1,"logDateTim":1,"handleCode":200}]`))
	require.Equal(t, 200, status)
	require.Equal(t, 500, env.Code)
	require.Contains(t, *env.Msg, "retry later")
	_, env = b.do(t, post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"}`))
	require.Equal(t, 500, env.Code)
}

// The success envelope carries both payload keys, so 2.x (content) and 3.x (data)
// executors accept it (wire-protocol.md §11.2).
func TestSuccessEnvelopeShape(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, "")
	resp, err := b.app.Test(post("/xxl-job-admin/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://127.0.0.1:9999/"}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, `{"code":200,"msg":null,"content":null,"data":null}`, string(bytes.TrimSpace(body)))
	require.Equal(t, 1, b.db.Count(t, "xxl_job_registry", "registry_key='app'"))
}

// wire-protocol.md §7 (HEAD 3.5): on a 3.5 database an executor authenticates with
// XXL-JOB-APPNAME and its group's access_token; a wrong pair is refused.
func TestGroupTokensOn35Layout(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, "")
	store := to35(t, b.db)
	b.db.Exec(t, "UPDATE xxl_job_group SET access_token='group-secret'")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := routes.NewApp(log)
	(&routes.API{Core: nopCore{}, AccessToken: "global", GroupTokens: store.GroupTokens, Log: log}).Mount(app, "")
	b.app = app
	reg := `{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}`
	for _, tc := range []struct {
		headers []string
		code    int
	}{
		{[]string{"XXL-JOB-ACCESS-TOKEN", "group-secret", "XXL-JOB-APPNAME", "xxl-job-executor-sample"}, 200},
		{[]string{"XXL-JOB-ACCESS-TOKEN", "global"}, 200},
		{[]string{"XXL-JOB-ACCESS-TOKEN", "group-secret", "XXL-JOB-APPNAME", "other-app"}, 500},
		{[]string{"XXL-JOB-ACCESS-TOKEN", "wrong", "XXL-JOB-APPNAME", "xxl-job-executor-sample"}, 500},
		{[]string{"XXL-JOB-ACCESS-TOKEN", "group-secret"}, 500},
	} {
		_, env := b.do(t, post("/api/registry", reg, tc.headers...))
		require.Equal(t, tc.code, env.Code, "%v", tc.headers)
	}
}

// to35 turns a 3.4 database into the 3.5 layout (renamed columns, group tokens) and
// opens a Store on it.
func to35(t *testing.T, db *schematest.DB) *schema.Store {
	t.Helper()
	db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
	db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
	db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
	store, r, err := schema.OpenStore(context.Background(), db.SQL)
	require.NoError(t, err)
	require.Equal(t, schema.Layout35, r.Layout.Name)
	return store
}

type nopCore struct{}

func (nopCore) Registry(context.Context, string, string, string) error       { return nil }
func (nopCore) RegistryRemove(context.Context, string, string, string) error { return nil }
func (nopCore) Callback(context.Context, []scheduler.CallbackResult) error   { return nil }

// On the 3.5 layout a group's token speaks for its own app only (upstream lets it
// register under and report results for any app): a registry or registryRemove for
// another app's key and a callback for another app's log are refused, and nothing of
// that app changes; the global token keeps upstream's reach (wire-protocol.md §7).
func TestGroupTokenActsForItsOwnAppOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, "global")
	b.store = to35(t, b.db)
	ctx := context.Background()
	b.db.Exec(t, "INSERT INTO xxl_job_group (app_name, name, address_type, access_token) VALUES ('app-a', 'A', 0, 'token-a'), ('app-b', 'B', 0, 'token-b')")
	var groupA, groupB int64
	require.NoError(t, b.db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='app-a'").Scan(&groupA))
	require.NoError(t, b.db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='app-b'").Scan(&groupB))
	logA, err := b.store.InsertLog(ctx, int(groupA), 1, time.Now())
	require.NoError(t, err)
	logB, err := b.store.InsertLog(ctx, int(groupB), 1, time.Now())
	require.NoError(t, err)
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=200")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sched := scheduler.New(scheduler.Config{Location: b.db.Loc, Logger: log}, b.store,
		scheduler.HTTPExecutor{Client: executor.New(executor.Options{})}, clock.NewFake(time.Now()))
	t.Cleanup(func() { sched.Stop(context.Background()) })
	b.app = routes.NewApp(log)
	(&routes.API{Core: sched, AccessToken: "global", GroupTokens: b.store.GroupTokens, LogApps: b.store.LogApps, Log: log}).Mount(b.app, "")
	asA := []string{"XXL-JOB-ACCESS-TOKEN", "token-a", "XXL-JOB-APPNAME", "app-a"}
	regB := `{"registryGroup":"EXECUTOR","registryKey":"app-b","registryValue":"http://127.0.0.1:9/"}`
	b.db.Exec(t, "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) VALUES ('EXECUTOR', 'app-b', 'http://10.0.0.2:9999/', NOW())")

	_, env := b.do(t, post("/api/registry", regB, asA...))
	require.Equal(t, 500, env.Code)
	require.Contains(t, *env.Msg, "registryKey")
	_, env = b.do(t, post("/api/registryRemove", `{"registryGroup":"EXECUTOR","registryKey":"app-b","registryValue":"http://10.0.0.2:9999/"}`, asA...))
	require.Equal(t, 500, env.Code)
	require.Equal(t, 0, b.db.Count(t, "xxl_job_registry", "registry_key='app-b' AND registry_value='http://127.0.0.1:9/'"))
	require.Equal(t, 1, b.db.Count(t, "xxl_job_registry", "registry_key='app-b' AND registry_value='http://10.0.0.2:9999/'"))
	_, env = b.do(t, post("/api/registry", `{"registryGroup":"EXECUTOR","registryKey":"app-a","registryValue":"http://127.0.0.1:9/"}`, asA...))
	require.Equal(t, 200, env.Code)

	// A forged result for B's log in a batch with A's own: A's is stored, B's refused.
	_, env = b.do(t, post("/api/callback", `[{"logId":`+itoa(logB)+`,"handleCode":200,"handleMsg":"forged by app-a"},{"logId":`+itoa(logA)+`,"handleCode":200,"handleMsg":"ok"}]`, asA...))
	require.Equal(t, 500, env.Code)
	require.Contains(t, *env.Msg, itoa(logB))
	l, err := b.store.LoadLog(ctx, logB)
	require.NoError(t, err)
	require.Equal(t, 0, l.HandleCode, "B's log untouched")
	l, err = b.store.LoadLog(ctx, logA)
	require.NoError(t, err)
	require.Equal(t, 200, l.HandleCode, "A's own result stored")

	// The global token (2.x–3.4 executors, and 3.5 ones configured with it) reaches every app.
	_, env = b.do(t, post("/api/callback", `[{"logId":`+itoa(logB)+`,"handleCode":500,"handleMsg":"by global"}]`, "XXL-JOB-ACCESS-TOKEN", "global"))
	require.Equal(t, 200, env.Code)
	l, err = b.store.LoadLog(ctx, logB)
	require.NoError(t, err)
	require.Equal(t, 500, l.HandleCode)
	_, env = b.do(t, post("/api/registry", regB, "XXL-JOB-ACCESS-TOKEN", "global"))
	require.Equal(t, 200, env.Code)
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
