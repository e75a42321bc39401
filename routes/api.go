// Package routes is the HTTP surface of the admin for executors: the executor API
// (/api/*) served under the configured context path and under "/", and the fiber app
// every handler is mounted on. Handlers decode, check, call one domain function and
// encode; they never touch SQL. The rules they call (registration, callbacks) are in
// scheduler; the console's handlers are in routes/console.
package routes

import (
	"bytes"
	"context"
	"crypto/subtle"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// MaxBodyBytes is the largest request body accepted, the executor's own limit.
const MaxBodyBytes = 5 << 20

// MsgBodyTooLarge answers a body over MaxBodyBytes.
const MsgBodyTooLarge = "invalid request, body larger than 5 MiB"

// ExecutorAPI is what the /api/* handlers need from the scheduler.
type ExecutorAPI interface {
	Registry(ctx context.Context, group, key, value string) error
	RegistryRemove(ctx context.Context, group, key, value string) error
	Callback(ctx context.Context, items []scheduler.CallbackResult) error
}

// API serves the endpoints executors call (wire-protocol.md §4).
type API struct {
	Core ExecutorAPI
	// AccessToken is xxl.job.accessToken; blank disables the check (and a missing
	// header is then accepted, unlike the 3.3.0/3.3.1 HTTP 400 quirk).
	AccessToken string
	// GroupTokens, when set (3.5 layout), also admits an executor that sends
	// XXL-JOB-APPNAME and its group's access_token, as 3.5 executors do. It is called
	// at most every 30 s (upstream caches groups for 30 s too).
	GroupTokens func(ctx context.Context) (map[string]string, error)
	// LogApps, set with GroupTokens, names the app of each log (schema.Store.LogApps):
	// a caller admitted by its group's token may report results of its own app's logs
	// only. Callers with the global token are not restricted, as upstream.
	LogApps func(ctx context.Context, ids []int64) (map[int64]string, error)
	// Jobs, when set, serves the job OpenAPI calls it Handles (routes/openapi).
	Jobs JobCalls
	// ClientAddr names the client of a job OpenAPI call for the audit log
	// (console.Proxies.ClientAddr); the TCP peer when nil.
	ClientAddr func(c *fiber.Ctx) string
	Log        *slog.Logger

	tokMu     sync.Mutex
	tokens    map[string]string
	tokLoaded time.Time
	refused   refusals
}

// JobCalls is the job OpenAPI as the executor API hands calls over to it, after its
// gatekeeping: app is "" for a caller with the global access token, else the app name
// whose group token the caller presented. A caller sending "Authorization: Bearer"
// with a secret of the API tokens' form (manage.TokenPrefix) goes to CallBearer with
// the secret, which the job OpenAPI checks itself.
type JobCalls interface {
	Handles(uri string) bool
	Call(ctx context.Context, uri string, body []byte, app string) protocol.Reply
	CallBearer(ctx context.Context, uri string, body []byte, secret string) protocol.Reply
}

// Mount registers the executor API under every prefix ("" is the root).
func (a *API) Mount(app *fiber.App, prefixes ...string) {
	seen := map[string]bool{}
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if seen[p] {
			continue
		}
		seen[p] = true
		app.All(p+"/api", a.handle)
		app.All(p+"/api/", a.handle)
		app.All(p+"/api/:uri", a.handle)
	}
}

func reply(c *fiber.Ctx, r protocol.Reply) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(fiber.StatusOK).Send(r.Bytes())
}

// handle applies upstream's gatekeeping order (wire-protocol.md §4.1, P2): method,
// uri, body, token, then dispatch.
func (a *API) handle(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodPost {
		return reply(c, protocol.Fail(protocol.MsgMethodNotSupported))
	}
	uri := c.Params("uri")
	if uri == "" {
		return reply(c, protocol.Fail(protocol.MsgURIEmpty))
	}
	body, ok := readBody(c, MaxBodyBytes)
	if !ok {
		return reply(c, protocol.Fail(MsgBodyTooLarge))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return reply(c, protocol.Fail(protocol.MsgBodyEmpty))
	}
	ctx := c.UserContext()
	if a.Jobs != nil && a.Jobs.Handles(uri) {
		client := a.clientOf(c)
		// A scoped API token stands alone: the access token headers are not read. Only
		// a bearer secret of our form counts, so that an Authorization header a
		// reverse proxy adds for itself leaves the access token headers in charge.
		if secret, ok := bearer(c.Get(fiber.HeaderAuthorization)); ok && strings.HasPrefix(secret, manage.TokenPrefix) {
			return reply(c, a.Jobs.CallBearer(manage.WithClient(ctx, client), uri, body, secret))
		}
		// Managing jobs always needs a token that matched: a blank
		// xxl.job.accessToken opens the executor calls only.
		global, group := a.credentials(ctx, c.Get(protocol.HeaderAccessToken), c.Get(protocol.HeaderAppName))
		if !global && !group {
			a.refuse(RefusedToken, client, uri, c.Get(protocol.HeaderAppName))
			return reply(c, protocol.Fail(protocol.MsgTokenWrong))
		}
		app := c.Get(protocol.HeaderAppName)
		if global {
			app = ""
		}
		return reply(c, a.Jobs.Call(manage.WithClient(ctx, client), uri, body, app))
	}
	// A caller admitted by a group's token (3.5) acts for that group's app only: upstream
	// lets it register under, and report results for, any app, so that one executor's
	// token could steer another group's triggers (and their token) to itself.
	app := c.Get(protocol.HeaderAppName)
	global, group := a.credentials(ctx, c.Get(protocol.HeaderAccessToken), app)
	if !global && !group && !a.open(app) {
		a.refuse(RefusedToken, a.clientOf(c), uri, app)
		return reply(c, protocol.Fail(protocol.MsgTokenWrong))
	}
	if !group {
		app = ""
	}
	switch uri {
	case "registry", "registryRemove":
		p, err := protocol.DecodeRegistry(body)
		if err != nil {
			return reply(c, protocol.Fail(err.Error()))
		}
		if !httpURL(p.RegistryValue) {
			return reply(c, protocol.Fail("invalid request, registryValue must be an http:// or https:// address"))
		}
		if msg := registryTooLong(p); msg != "" {
			return reply(c, protocol.Fail(msg))
		}
		if app != "" && p.RegistryKey != app {
			a.refused.count(RefusedApp)
			a.Log.Warn("registry refused: key is not the caller's app", "op", uri, "app", app, "registry_key", p.RegistryKey, "executor", p.RegistryValue)
			return reply(c, protocol.Fail("invalid request, registryKey must be the app name of the access token ("+app+")"))
		}
		if uri == "registry" {
			err = a.Core.Registry(ctx, p.RegistryGroup, p.RegistryKey, p.RegistryValue)
		} else {
			err = a.Core.RegistryRemove(ctx, p.RegistryGroup, p.RegistryKey, p.RegistryValue)
		}
		if err != nil {
			a.Log.Error("registry not stored", "op", uri, "executor", p.RegistryValue, "err", err)
			return reply(c, protocol.Fail("registry not stored, database unavailable; retry later"))
		}
		return reply(c, protocol.Success())
	case "callback":
		items, err := protocol.DecodeCallbacks(body)
		if err != nil {
			return reply(c, protocol.Fail(err.Error()))
		}
		results := make([]scheduler.CallbackResult, len(items))
		for i, it := range items {
			results[i] = scheduler.CallbackResult{LogID: it.LogID, HandleCode: it.HandleCode, HandleMsg: it.HandleMsg}
		}
		results, refused, err := a.ownLogs(ctx, app, results)
		if err == nil {
			err = a.Core.Callback(ctx, results)
		}
		if err != nil {
			// Failure makes the executor keep the results and send them again.
			a.Log.Error("callback not stored", "items", len(items), "err", err)
			return reply(c, protocol.Fail("callback not stored, database unavailable; retry later"))
		}
		if len(refused) > 0 {
			a.refused.count(RefusedApp)
			a.Log.Warn("callback refused: logs of another app", "app", app, "log_ids", refused)
			return reply(c, protocol.Fail("callback refused for logs "+joinIDs(refused)+": not logs of app "+app))
		}
		return reply(c, protocol.Success())
	}
	return reply(c, protocol.Fail(protocol.MsgURINotFound(uri)))
}

// clientOf names the caller: the TCP peer, or the client a trusted proxy names.
func (a *API) clientOf(c *fiber.Ctx) string {
	if a.ClientAddr != nil {
		return a.ClientAddr(c)
	}
	return c.IP()
}

// bearer reads the secret of an "Authorization: Bearer <secret>" header (the scheme
// case-insensitive, as RFC 6750).
func bearer(h string) (string, bool) {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.Clone(strings.TrimSpace(secret)), true
}

// open reports whether the executor calls need no token: without a global token and
// without an app name header no check applies, as upstream.
func (a *API) open(app string) bool {
	return a.AccessToken == "" && (a.GroupTokens == nil || app == "")
}

// ownLogs splits results into those of app's logs (and of logs no longer there, which
// the scheduler drops as it always did) and the ids of other apps' logs. app "" (a
// caller with the global token, or with none needed) keeps every result.
func (a *API) ownLogs(ctx context.Context, app string, results []scheduler.CallbackResult) ([]scheduler.CallbackResult, []int64, error) {
	if app == "" || a.LogApps == nil || len(results) == 0 {
		return results, nil, nil
	}
	ids := make([]int64, len(results))
	for i, r := range results {
		ids[i] = r.LogID
	}
	apps, err := a.LogApps(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	kept := results[:0]
	var refused []int64
	for _, r := range results {
		if owner, ok := apps[r.LogID]; ok && owner != app {
			refused = append(refused, r.LogID)
			continue
		}
		kept = append(kept, r)
	}
	return kept, refused, nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

// credentials reports which token matched: the global one, or (3.5) the one of the
// group named by app.
func (a *API) credentials(ctx context.Context, got, app string) (global, group bool) {
	if a.AccessToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.AccessToken)) == 1 {
		return true, false
	}
	if a.GroupTokens != nil && app != "" {
		if want, ok := a.groupToken(ctx, app); ok && want != "" {
			return false, subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
		}
	}
	return false, false
}

func (a *API) groupToken(ctx context.Context, app string) (string, bool) {
	a.tokMu.Lock()
	defer a.tokMu.Unlock()
	if a.tokens == nil || time.Since(a.tokLoaded) > 30*time.Second {
		m, err := a.GroupTokens(ctx)
		if err != nil {
			a.Log.Warn("could not load group tokens; keeping the previous ones", "err", err)
		} else {
			a.tokens, a.tokLoaded = m, time.Now()
		}
	}
	tok, ok := a.tokens[app]
	return tok, ok
}

// registryTooLong names a registry value longer than its xxl_job_registry column
// (VARCHAR 50/255/255 characters): the database would refuse it, and "database
// unavailable" would make the executor retry forever.
func registryTooLong(p protocol.RegistryParam) string {
	for _, f := range []struct {
		name, v string
		max     int
	}{{"registryGroup", p.RegistryGroup, 50}, {"registryKey", p.RegistryKey, 255}, {"registryValue", p.RegistryValue, 255}} {
		if utf8.RuneCountInString(f.v) > f.max {
			return "invalid request, " + f.name + " longer than " + strconv.Itoa(f.max) + " characters"
		}
	}
	return ""
}

func httpURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ErrorHandler answers errors raised outside handlers (oversized bodies, unknown
// routes) with the envelope executors understand on /api paths, and plain text
// elsewhere; never an HTML page.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		code := fiber.StatusInternalServerError
		if fe, ok := err.(*fiber.Error); ok {
			code = fe.Code
		}
		if strings.Contains(c.Path(), "/api/") || strings.HasSuffix(c.Path(), "/api") {
			msg := err.Error()
			if code == fiber.StatusRequestEntityTooLarge {
				msg = MsgBodyTooLarge
			}
			return reply(c, protocol.Fail(msg))
		}
		if code >= 500 {
			log.Error("request failed", "path", c.Path(), "err", err)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(code).SendString(err.Error())
	}
}
