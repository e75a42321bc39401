package adminapp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// tokenBundle is the job API bundle with a signed-in administrator's console client.
type tokenBundle struct {
	jobAPIBundle
	console *consoleClient
}

func setupTokens(t *testing.T, layout schema.LayoutName) tokenBundle {
	t.Helper()
	return signInTokens(t, setupJobAPI(t, layout, nil))
}

// setupTokensOn is setupTokens on a 3.4 database on database (onMariaDB, onSQLite).
func setupTokensOn(t *testing.T, database string) tokenBundle {
	t.Helper()
	return signInTokens(t, setupJobAPIOn(t, database, schema.Layout34, nil))
}

func signInTokens(t *testing.T, b jobAPIBundle) tokenBundle {
	t.Helper()
	c := newConsoleClient(t, b.base)
	_, body := c.post("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
	require.Contains(t, body, `"code":200`)
	return tokenBundle{jobAPIBundle: b, console: c}
}

// createdToken is the answer of /apitoken/insert.
type createdToken struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Groups   []int  `json:"groups"`
	ReadOnly bool   `json:"readOnly"`
	State    string `json:"state"`
	Secret   string `json:"secret"`
}

// createToken creates a token through the console as the administrator.
func (b tokenBundle) createToken(t *testing.T, form url.Values) createdToken {
	t.Helper()
	_, body := b.console.post("/apitoken/insert", form, "")
	var r struct {
		Code int          `json:"code"`
		Msg  string       `json:"msg"`
		Data createdToken `json:"data"` // 3.x answer (the client signed in with /auth/doLogin)
	}
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	require.Equal(t, 200, r.Code, r.Msg)
	return r.Data
}

func (b tokenBundle) bearer(t *testing.T, secret, uri, body string) apiReply {
	t.Helper()
	return b.call(t, uri, body, "Authorization", "Bearer "+secret)
}

// writeBodies are a body of each of the six calls against job id.
func writeBodies(id int, group int) map[string]string {
	ids := `{"id":` + strconv.Itoa(id) + `}`
	return map[string]string{
		"addJob":     addJobIn(group),
		"updateJob":  withID(updateJobBody, id),
		"startJob":   ids,
		"stopJob":    ids,
		"triggerJob": ids,
		"removeJob":  ids,
	}
}

// TestAPITokenScope creates scoped tokens in the console and replays the scope rules
// over HTTP on MariaDB and on an embedded SQLite file: a token of group 1 can neither read nor touch group 2, a
// read-only token cannot write, revoked and expired tokens fail, and the secret is
// neither stored nor shown again.
func TestAPITokenScope(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupTokensOn, testAPITokenScope)
}

func testAPITokenScope(t *testing.T, b tokenBundle) {
	b.addGroupB(t)
	other := addedID(t, b.admin(t, "addJob", addJobIn(2)))
	require.Equal(t, 200, b.admin(t, "triggerJob", `{"id":`+strconv.Itoa(other)+`}`).Code)
	var otherLog int64
	require.NoError(t, b.db.SQL.QueryRow("SELECT MAX(id) FROM xxl_job_log WHERE job_id = ?", other).Scan(&otherLog))

	rw := b.createToken(t, url.Values{"name": {"deploy"}, "groups": {"1"}})
	ro := b.createToken(t, url.Values{"name": {"dashboard"}, "groups[]": {"1"}, "readOnly": {"1"}})
	require.True(t, strings.HasPrefix(rw.Secret, "xat_"), rw.Secret)
	require.GreaterOrEqual(t, len(rw.Secret), 40)
	require.Equal(t, []int{1}, rw.Groups)
	require.False(t, rw.ReadOnly)
	require.True(t, ro.ReadOnly)
	require.Equal(t, "active", rw.State)

	t.Run("SecretNotKept", func(t *testing.T) {
		sum := sha256.Sum256([]byte(rw.Secret))
		require.Equal(t, 1, b.db.Count(t, "xxl_admin_api_token", "token_hash = ?", hex.EncodeToString(sum[:])))
		require.Zero(t, b.db.Count(t, "xxl_admin_api_token", "token_hash = ? OR name = ? OR group_ids = ?",
			rw.Secret, rw.Secret, rw.Secret))
		_, list := b.console.post("/apitoken/pageList", url.Values{"offset": {"0"}, "pagesize": {"10"}}, "")
		require.Contains(t, list, `"deploy"`)
		require.NotContains(t, list, rw.Secret)
		require.NotContains(t, list, strings.TrimPrefix(rw.Secret, "xat_")[:16])
		require.NotContains(t, list, hex.EncodeToString(sum[:]))
	})

	t.Run("OwnGroup", func(t *testing.T) {
		own := addedID(t, b.bearer(t, rw.Secret, "addJob", addJobBody))
		r := b.bearer(t, rw.Secret, "getJob", `{"id":`+strconv.Itoa(own)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		var job struct {
			ID       int    `json:"id"`
			JobGroup int    `json:"jobGroup"`
			Name     string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &job))
		require.Equal(t, own, job.ID)
		require.Equal(t, "api job", job.Name)

		r = b.bearer(t, rw.Secret, "listJobs", `{}`)
		require.Equal(t, 200, r.Code, r.msg())
		var list struct {
			Total int `json:"total"`
			Items []struct {
				ID       int `json:"id"`
				JobGroup int `json:"jobGroup"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &list))
		require.Equal(t, b.db.Count(t, "xxl_job_info", "job_group = 1"), list.Total)
		require.Len(t, list.Items, list.Total)
		for _, it := range list.Items {
			require.Equal(t, 1, it.JobGroup, "job %d", it.ID)
		}

		require.Equal(t, 200, b.bearer(t, rw.Secret, "triggerJob", `{"id":`+strconv.Itoa(own)+`,"executorParam":"tok"}`).Code)
		require.Eventually(t, func() bool { // answered once stored; sent right after
			return b.db.Count(t, "xxl_job_log", "job_id = ? AND trigger_code = 200", own) == 1
		}, 20*time.Second, 20*time.Millisecond)
		r = b.bearer(t, rw.Secret, "listLogs", `{"jobId":`+strconv.Itoa(own)+`,"pagesize":5}`)
		require.Equal(t, 200, r.Code, r.msg())
		var logs struct {
			Total int `json:"total"`
			Items []struct {
				ID          int64  `json:"id"`
				TriggerCode int    `json:"triggerCode"`
				Status      string `json:"status"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &logs))
		require.Equal(t, 1, logs.Total)
		r = b.bearer(t, rw.Secret, "getLog", `{"id":`+strconv.FormatInt(logs.Items[0].ID, 10)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		var run struct {
			JobID         int     `json:"jobId"`
			Status        string  `json:"status"`
			TriggerCode   int     `json:"triggerCode"`
			TriggerMsg    string  `json:"triggerMsg"`
			HandleCode    int     `json:"handleCode"`
			ExecutorParam string  `json:"executorParam"`
			TriggerTime   *string `json:"triggerTime"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &run))
		require.Equal(t, own, run.JobID)
		require.Equal(t, 200, run.TriggerCode)
		require.Equal(t, "running", run.Status, "triggered, no result yet")
		require.Equal(t, "tok", run.ExecutorParam)
		require.NotNil(t, run.TriggerTime)

		b.db.Exec(t, "UPDATE xxl_job_log SET handle_code = 500, handle_msg = 'boom' WHERE id = ?", logs.Items[0].ID)
		r = b.bearer(t, ro.Secret, "getLog", `{"id":`+strconv.FormatInt(logs.Items[0].ID, 10)+`}`)
		require.NoError(t, json.Unmarshal(r.Data, &run))
		require.Equal(t, "failed", run.Status)
		require.Equal(t, 500, run.HandleCode)

		require.Equal(t, 200, b.bearer(t, rw.Secret, "removeJob", `{"id":`+strconv.Itoa(own)+`}`).Code)
		require.Zero(t, b.db.Count(t, "xxl_job_info", "id = ?", own))
	})

	t.Run("OtherGroup", func(t *testing.T) {
		before := b.job(t, other)
		for _, tok := range []createdToken{rw, ro} {
			for uri, body := range map[string]string{
				"listJobs": `{"jobGroup":2}`,
				"getJob":   `{"id":` + strconv.Itoa(other) + `}`,
				"listLogs": `{"jobId":` + strconv.Itoa(other) + `}`,
				"getLog":   `{"id":` + strconv.FormatInt(otherLog, 10) + `}`,
			} {
				r := b.bearer(t, tok.Secret, uri, body)
				require.Equal(t, 500, r.Code, "%s %s", tok.Name, uri)
				require.NotEmpty(t, r.msg())
				require.Equal(t, "null", string(r.Data), "%s %s", tok.Name, uri)
			}
		}
		for uri, body := range writeBodies(other, 2) {
			r := b.bearer(t, rw.Secret, uri, body)
			require.Equal(t, 500, r.Code, uri)
			require.NotEmpty(t, r.msg(), uri)
		}
		require.Equal(t, before, b.job(t, other), "unchanged")
		require.Equal(t, 1, b.db.Count(t, "xxl_job_log", "job_id = ?", other), "not triggered")
		require.Zero(t, b.db.Count(t, "xxl_job_info", "job_group = 2 AND id <> ?", other), "not created")
	})

	t.Run("ReadOnly", func(t *testing.T) {
		jobs := b.db.Count(t, "xxl_job_info", "")
		before := b.job(t, 1)
		logs := b.db.Count(t, "xxl_job_log", "")
		for uri, body := range writeBodies(1, 1) {
			r := b.bearer(t, ro.Secret, uri, body)
			require.Equal(t, 500, r.Code, uri)
			require.Contains(t, r.msg(), "read-only", uri)
		}
		require.Equal(t, jobs, b.db.Count(t, "xxl_job_info", ""))
		require.Equal(t, before, b.job(t, 1))
		require.Equal(t, logs, b.db.Count(t, "xxl_job_log", ""))
		require.Equal(t, 200, b.bearer(t, ro.Secret, "getJob", `{"id":1}`).Code)
		require.Equal(t, 200, b.bearer(t, ro.Secret, "listLogs", `{"jobId":1}`).Code)
	})

	t.Run("RevokedExpiredUnknown", func(t *testing.T) {
		gone := b.createToken(t, url.Values{"name": {"old script"}, "groups": {"1,2"}})
		require.Equal(t, 200, b.bearer(t, gone.Secret, "getJob", `{"id":1}`).Code)
		_, body := b.console.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(gone.ID)}}, "")
		require.Contains(t, body, `"code":200`)
		for uri, body := range map[string]string{"getJob": `{"id":1}`, "startJob": `{"id":1}`} {
			r := b.bearer(t, gone.Secret, uri, body)
			require.Equal(t, 500, r.Code, uri)
			require.Equal(t, "The API token has been revoked.", r.msg())
			// A valid access token beside a bearer token does not rescue it.
			r = b.call(t, uri, body, "Authorization", "Bearer "+gone.Secret, "XXL-JOB-ACCESS-TOKEN", "api-token")
			require.Equal(t, 500, r.Code, uri)
		}

		late := b.createToken(t, url.Values{"name": {"temp"}, "groups": {"1"},
			"expire": {time.Now().AddDate(0, 0, 2).Format(time.DateOnly)}})
		require.Equal(t, 200, b.bearer(t, late.Secret, "getJob", `{"id":1}`).Code)
		b.db.Exec(t, "UPDATE xxl_admin_api_token SET expire_time = ? WHERE id = ?", time.Now().Add(-time.Second).UnixMilli(), late.ID)
		r := b.bearer(t, late.Secret, "getJob", `{"id":1}`)
		require.Equal(t, 500, r.Code)
		require.Equal(t, "The API token has expired.", r.msg())

		for _, secret := range []string{"xat_" + strings.Repeat("A", 43), "xat_", rw.Secret[:len(rw.Secret)-1]} {
			r := b.bearer(t, secret, "getJob", `{"id":1}`)
			require.Equal(t, 500, r.Code)
			require.Equal(t, "The API token is not valid.", r.msg())
		}
	})

	t.Run("ProxyAuthorization", func(t *testing.T) {
		// A bearer secret not of our form is someone else's (a reverse proxy's): the
		// access token headers decide, as without it.
		for _, h := range []string{"Bearer proxy-issued.jwt.value", "bearer nonsense", "Basic dXNlcjpwYXNz"} {
			r := b.call(t, "getJob", `{"id":1}`, "Authorization", h, "XXL-JOB-ACCESS-TOKEN", "api-token")
			require.Equal(t, 200, r.Code, "%s: %s", h, r.msg())
			r = b.call(t, "getJob", `{"id":1}`, "Authorization", h)
			require.Equal(t, 500, r.Code, h)
			require.Equal(t, "The access token is wrong.", r.msg(), h)
			r = b.call(t, "getJob", `{"id":1}`, "Authorization", h, "XXL-JOB-ACCESS-TOKEN", "wrong")
			require.Equal(t, "The access token is wrong.", r.msg(), h)
		}
		// One of ours decides alone, whatever the access token headers say.
		r := b.call(t, "getJob", `{"id":1}`, "Authorization", "Bearer "+ro.Secret, "XXL-JOB-ACCESS-TOKEN", "wrong")
		require.Equal(t, 200, r.Code, r.msg())
		r = b.call(t, "getJob", `{"id":1}`, "Authorization", "Bearer xat_"+strings.Repeat("B", 43), "XXL-JOB-ACCESS-TOKEN", "api-token")
		require.Equal(t, "The API token is not valid.", r.msg())
	})

	t.Run("Console2xLine", func(t *testing.T) {
		// A 2.x script's session (POST /login, XXL_JOB_LOGIN_IDENTITY) manages tokens
		// too, answered in 2.x envelopes.
		c := newConsoleClient(t, b.base)
		_, body := c.post("/login", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
		require.Contains(t, body, `"code":200`)
		_, body = c.post("/apitoken/insert", url.Values{"name": {"legacy cron"}, "groups": {"1"}, "readOnly": {"1"}}, "")
		var r struct {
			Code    int          `json:"code"`
			Content createdToken `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &r), body)
		require.Equal(t, 200, r.Code, body)
		require.True(t, strings.HasPrefix(r.Content.Secret, "xat_"))
		require.Equal(t, 200, b.bearer(t, r.Content.Secret, "getJob", `{"id":1}`).Code)
		_, body = c.post("/apitoken/pageList", url.Values{"start": {"0"}, "length": {"10"}}, "")
		require.Contains(t, body, `"recordsTotal":`)
		require.Contains(t, body, `"legacy cron"`)
		require.NotContains(t, body, r.Content.Secret)
		_, body = c.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(r.Content.ID)}}, "")
		require.Contains(t, body, `"code":200`)
		require.Equal(t, 500, b.bearer(t, r.Content.Secret, "getJob", `{"id":1}`).Code)
	})

	t.Run("ConsoleRules", func(t *testing.T) {
		tokens := b.db.Count(t, "xxl_admin_api_token", "")
		for name, form := range map[string]url.Values{
			"no name":       {"groups": {"1"}},
			"no group":      {"name": {"x"}},
			"unknown group": {"name": {"x"}, "groups": {"99"}},
			"bad group":     {"name": {"x"}, "groups": {"1,a"}},
			"past expiry":   {"name": {"x"}, "groups": {"1"}, "expire": {"2020-01-01"}},
			"bad expiry":    {"name": {"x"}, "groups": {"1"}, "expire": {"next week"}},
			"long name":     {"name": {strings.Repeat("n", 65)}, "groups": {"1"}},
		} {
			_, body := b.console.post("/apitoken/insert", form, "")
			require.Contains(t, body, `"code":500`, name)
		}
		require.Equal(t, tokens, b.db.Count(t, "xxl_admin_api_token", ""))

		// Changes are POST only and same-origin only, as every console change.
		res, err := b.console.hc.Get(b.base + "/apitoken/insert?name=x&groups=1")
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		req, err := http.NewRequest(http.MethodPost, b.base+"/apitoken/revoke", strings.NewReader("id="+strconv.Itoa(ro.ID)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		res, err = b.console.hc.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		require.Equal(t, tokens, b.db.Count(t, "xxl_admin_api_token", ""))
		require.Zero(t, b.db.Count(t, "xxl_admin_api_token", "revoke_time > 0 AND id = ?", ro.ID))

		// Members may neither create, list nor revoke tokens.
		_, body := b.console.post("/user/insert", url.Values{"username": {"member1"}, "password": {"secret1"}, "role": {"0"}, "permission": {"1"}}, "")
		require.Contains(t, body, `"code":200`)
		m := newConsoleClient(t, b.base)
		_, body = m.post("/auth/doLogin", url.Values{"userName": {"member1"}, "password": {"secret1"}}, "")
		require.Contains(t, body, `"code":200`)
		_, body = m.post("/apitoken/insert", url.Values{"name": {"mine"}, "groups": {"1"}}, "")
		require.Contains(t, body, `"code":500`)
		_, body = m.post("/apitoken/pageList", url.Values{}, "")
		require.Contains(t, body, `"code":500`)
		_, body = m.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(ro.ID)}}, "")
		require.Contains(t, body, `"code":500`)
		require.Equal(t, tokens, b.db.Count(t, "xxl_admin_api_token", ""))
		require.Zero(t, b.db.Count(t, "xxl_admin_api_token", "revoke_time > 0 AND id = ?", ro.ID))
	})
}

// TestAPITokenWithoutTable: on a database a Java admin created and nobody upgraded,
// bearer calls and the token page say which command adds the table; the other
// credentials keep working.
func TestAPITokenWithoutTable(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupTokensOn, testAPITokenWithoutTable)
}

func testAPITokenWithoutTable(t *testing.T, b tokenBundle) {
	b.db.Exec(t, "DROP TABLE xxl_admin_api_token")
	r := b.bearer(t, "xat_"+strings.Repeat("A", 43), "getJob", `{"id":1}`)
	require.Equal(t, 500, r.Code)
	require.Contains(t, r.msg(), "schema upgrade")
	_, body := b.console.post("/apitoken/pageList", url.Values{}, "")
	require.Contains(t, body, "schema upgrade")
	_, body = b.console.post("/apitoken/insert", url.Values{"name": {"x"}, "groups": {"1"}}, "")
	require.Contains(t, body, "schema upgrade")
	require.Equal(t, 200, b.admin(t, "getJob", `{"id":1}`).Code)
}

// TestAPITokenAudit: creating and revoking a token, a token's changes and its refused
// attempts are in the audit log with who and from where — and the secret is not.
func TestAPITokenAudit(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupTokensOn, testAPITokenAudit)
}

func testAPITokenAudit(t *testing.T, b tokenBundle) {
	b.addGroupB(t)
	rw := b.createToken(t, url.Values{"name": {"deploy"}, "groups": {"1"}})
	ro := b.createToken(t, url.Values{"name": {"viewer"}, "groups": {"1"}, "readOnly": {"1"}})
	actor := "token:" + strconv.Itoa(rw.ID) + ":deploy"

	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'token.create' AND actor = 'admin' AND actor_kind = 'user' AND target_kind = 'token' AND target_id = ? AND outcome = 'ok' AND client = '127.0.0.1' AND changes LIKE '%deploy%'", strconv.Itoa(rw.ID)))
	require.Zero(t, b.db.Count(t, "xxl_admin_audit", "changes LIKE ? OR changes LIKE ?", "%"+rw.Secret+"%", "%"+ro.Secret[4:20]+"%"), "no secret in the audit log")

	id := addedID(t, b.bearer(t, rw.Secret, "addJob", addJobBody))
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'job.add' AND actor = ? AND actor_kind = 'api_token' AND target_id = ? AND outcome = 'ok' AND client = '127.0.0.1'", actor, strconv.Itoa(id)))
	require.Equal(t, 200, b.bearer(t, rw.Secret, "triggerJob", `{"id":`+strconv.Itoa(id)+`}`).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'job.trigger' AND actor = ? AND target_id = ?", actor, strconv.Itoa(id)))
	reads := b.db.Count(t, "xxl_admin_audit", "")
	require.Equal(t, 200, b.bearer(t, rw.Secret, "getJob", `{"id":`+strconv.Itoa(id)+`}`).Code)
	require.Equal(t, reads, b.db.Count(t, "xxl_admin_audit", ""), "reads are not changes")

	// Refused changes: out of the token's groups, read-only, revoked.
	require.Equal(t, 500, b.bearer(t, rw.Secret, "addJob", addJobIn(2)).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'job.add' AND actor = ? AND outcome = 'denied'", actor))
	require.Equal(t, 500, b.bearer(t, ro.Secret, "stopJob", `{"id":`+strconv.Itoa(id)+`}`).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'job.stop' AND actor = ? AND actor_kind = 'api_token' AND target_id = ? AND outcome = 'denied'",
		"token:"+strconv.Itoa(ro.ID)+":viewer", strconv.Itoa(id)))
	_, body := b.console.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(rw.ID)}}, "")
	require.Contains(t, body, `"code":200`)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'token.revoke' AND actor = 'admin' AND target_id = ? AND changes LIKE '%revoked%'", strconv.Itoa(rw.ID)))
	_, body = b.console.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(rw.ID)}}, "")
	require.Contains(t, body, `"code":200`)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'token.revoke'"), "revoking again changes nothing")
	require.Equal(t, 500, b.bearer(t, rw.Secret, "removeJob", `{"id":`+strconv.Itoa(id)+`}`).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'job.remove' AND actor = ? AND outcome = 'denied'", actor))
}

// TestAPITokenTableCreatedAtStart: on a database without xxl_admin_api_token — a Java
// admin's, or an embedded file the admin holds, where `schema upgrade` cannot run
// beside it — the admin creates the table at start when its database user may, and
// tokens work at once; when it may not, it warns once and the token calls keep
// naming `schema upgrade`.
func TestAPITokenTableCreatedAtStart(t *testing.T) {
	t.Parallel()
	for _, database := range jobAPIDatabases {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			db := newDBOn(t, database, schema.Layout34)
			db.Exec(t, "DROP TABLE "+schema.APITokenTable)
			base, logs := serveConsole(t, db.SQL, db.Loc, "--xxl.job.accessToken=api-token", "--xxl.job.i18n=en")
			require.Contains(t, logs.String(), "created table xxl_admin_api_token")
			require.Zero(t, db.Count(t, schema.APITokenTable, ""))
			b := signInTokens(t, jobAPIBundle{db: db, base: base})
			tok := b.createToken(t, url.Values{"name": {"deploy"}, "groups": {"1"}})
			r := b.bearer(t, tok.Secret, "getJob", `{"id":1}`)
			require.Equal(t, 200, r.Code, r.msg())
		})
	}
	t.Run("not allowed", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.APITokenTable)
		base, logs := serveConsole(t, restrictedDB(t, db), db.Loc, "--xxl.job.accessToken=api-token", "--xxl.job.i18n=en")
		require.Equal(t, 1, strings.Count(logs.String(), "api tokens: table xxl_admin_api_token is missing"), logs.String())
		b := jobAPIBundle{db: db, base: base}
		r := b.call(t, "getJob", `{"id":1}`, "Authorization", "Bearer xat_"+strings.Repeat("A", 43))
		require.Equal(t, 500, r.Code)
		require.Contains(t, r.msg(), "schema upgrade")
		require.Equal(t, 200, b.admin(t, "getJob", `{"id":1}`).Code, "the access token works as before")
	})
}

// TestAPITokenAuditBoundsDenials: a script retrying refused changes — with a revoked
// token, a read-only one, or out of its groups — adds a bounded number of audit
// entries (one per token, call and job a minute, at most 10 per token), and the
// admin's log counts the rest.
func TestAPITokenAuditBoundsDenials(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupTokensOn, func(t *testing.T, b tokenBundle) {
		b.addGroupB(t)
		rw := b.createToken(t, url.Values{"name": {"deploy"}, "groups": {"1"}})
		ro := b.createToken(t, url.Values{"name": {"viewer"}, "groups": {"1"}, "readOnly": {"1"}})
		gone := b.createToken(t, url.Values{"name": {"old"}, "groups": {"1"}})
		_, body := b.console.post("/apitoken/revoke", url.Values{"id": {strconv.Itoa(gone.ID)}}, "")
		require.Contains(t, body, `"code":200`)
		denied := func(tok createdToken) int {
			return b.db.Count(t, "xxl_admin_audit", "outcome = 'denied' AND actor = ?", "token:"+strconv.Itoa(tok.ID)+":"+tok.Name)
		}

		for range 40 {
			require.Equal(t, 500, b.bearer(t, rw.Secret, "addJob", addJobIn(2)).Code)
			require.Equal(t, 500, b.bearer(t, ro.Secret, "stopJob", `{"id":1}`).Code)
		}
		require.Equal(t, 1, denied(rw), "out of its groups, 40 times")
		require.Equal(t, 1, denied(ro), "read-only, 40 times")
		for i := range 40 {
			require.Equal(t, 500, b.bearer(t, ro.Secret, "startJob", `{"id":`+strconv.Itoa(1000+i)+`}`).Code)
		}
		require.Equal(t, 10, denied(ro), "read-only, on 40 jobs: at most 10 a minute")
		for range 40 {
			require.NotEqual(t, 200, b.bearer(t, gone.Secret, "removeJob", `{"id":1}`).Code)
		}
		require.Equal(t, 1, denied(gone), "revoked, 40 times")
		require.Equal(t, 12, b.db.Count(t, "xxl_admin_audit", "outcome = 'denied'"))
		require.Contains(t, b.logs.String(), "audit: repeated denied attempts not recorded")
	})
}

// Ids past the INT columns' 32 bits, in the job OpenAPI's bodies and the console's
// forms, are answered as invalid or not found on every database, as HEAD's Java ints
// refuse them; PostgreSQL, which fails a statement with such a value where MySQL
// finds no row, no longer answers "internal error" or "database unavailable" and
// logs no ERROR line.
func TestIDsOutOfRange(t *testing.T) {
	t.Parallel()
	for _, database := range []string{onMariaDB, onSQLite, onPostgres} {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			b := setupTokensOn(t, database)
			for _, big := range []string{"2147483648", "-2147483649", "9223372036854775807"} {
				for _, call := range []struct{ uri, body string }{
					{"removeJob", `{"id":` + big + `}`},
					{"startJob", `{"id":` + big + `}`},
					{"triggerJob", `{"id":` + big + `}`},
					{"updateJob", `{"id":` + big + `,"jobGroup":1}`},
					{"addJob", strings.Replace(addJobBody, `"jobGroup":1`, `"jobGroup":`+big, 1)},
					{"addJob", strings.Replace(addJobBody, `"executorTimeout":10`, `"executorTimeout":`+big, 1)},
					{"listLogs", `{"jobId":` + big + `}`},
					{"listJobs", `{"jobGroup":` + big + `}`},
					{"getJob", `{"id":` + big + `}`},
				} {
					r := b.admin(t, call.uri, call.body)
					require.Equal(t, 500, r.Code, "%s %s", call.uri, call.body)
					require.NotContains(t, strings.ToLower(r.msg()), "internal", "%s %s", call.uri, call.body)
				}
				for _, c := range []struct {
					path string
					form url.Values
				}{
					{"/apitoken/revoke", url.Values{"id": {big}}},
					{"/jobinfo/delete", url.Values{"id": {big}}},
					{"/jobinfo/start", url.Values{"id": {big}}},
					{"/jobinfo/trigger", url.Values{"id": {big}}},
					{"/jobinfo/pageList", url.Values{"jobGroup": {big}}},
					{"/joblog/pageList", url.Values{"jobGroup": {"0"}, "jobId": {big}}},
					{"/joblog/jobNames", url.Values{"ids": {big}}},
					{"/jobgroup/loadById", url.Values{"id": {big}}},
					{"/user/delete", url.Values{"id": {big}}},
					{"/apitoken/insert", url.Values{"name": {"n"}, "groups": {big}}},
				} {
					_, body := b.console.post(c.path, c.form, "")
					require.NotContains(t, body, `"code":200`, "%s %v", c.path, c.form)
					require.NotContains(t, body, "database", "%s %v: %s", c.path, c.form, body)
				}
			}
			require.NotContains(t, b.logs.String(), "level=ERROR")
		})
	}
}
