// Package openapi serves the job OpenAPI of HEAD 3.5.0 (wire-protocol.md §4.5):
// addJob, updateJob, removeJob, startJob, stopJob and triggerJob under /api/, on every
// database layout, over the console's job rules (scheduler/manage), this admin's read
// and workflow calls (workflows.go), and its OpenAPI 3 description at /api/openapi.json.
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
)

// Document is the OpenAPI 3 description of the calls.
//
//go:embed openapi.json
var Document []byte

// CodeTooMany is the reply code of a call refused by the rate limiter.
const CodeTooMany = 502

// MsgTooMany answers a call refused by the rate limiter, as HEAD does.
const MsgTooMany = "Too many requests, please try again later."

// Jobs serves the six calls and the read calls. The executor API (routes.API)
// authenticates callers of the global or a group's token and hands the calls it names
// over; a caller with a scoped API token is authenticated here (CallBearer).
type Jobs struct {
	Manage *manage.Service
	// Limiter admits calls of authenticated callers; nil admits all. NewLimiter(100)
	// is HEAD's limit.
	Limiter Limiter
	Log     *slog.Logger
	// Now is the clock of the bound on refused bearer authentications; time.Now when
	// nil.
	Now func() time.Time

	failsOnce sync.Once
	fails     *window.Counter
	good      goodSecrets
}

// errTooMany is a call refused by the rate limiter or by the bound on refused bearer
// authentications; both are answered with CodeTooMany.
var errTooMany = errors.New("too many requests")

// writeCalls are HEAD's six calls; readCalls are this admin's read calls.
var (
	writeCalls = map[string]bool{"addJob": true, "updateJob": true, "removeJob": true, "startJob": true, "stopJob": true, "triggerJob": true}
	readCalls  = map[string]bool{"listJobs": true, "getJob": true, "listLogs": true, "getLog": true}
)

// Handles reports whether uri is one of the calls.
func (j *Jobs) Handles(uri string) bool {
	return writeCalls[uri] || readCalls[uri] || calendarCalls[uri] || drainCalls[uri]
}

// jobBody is the body of every call; each call reads the fields it needs. `name` is
// HEAD's field for the description; `jobDesc` (the 2.x–3.4 name) is accepted too.
type jobBody struct {
	ID                     *int    `json:"id"`
	JobGroup               int     `json:"jobGroup"`
	Name                   *string `json:"name"`
	JobDesc                *string `json:"jobDesc"`
	Author                 string  `json:"author"`
	AlarmEmail             string  `json:"alarmEmail"`
	ScheduleType           string  `json:"scheduleType"`
	ScheduleConf           string  `json:"scheduleConf"`
	MisfireStrategy        string  `json:"misfireStrategy"`
	ExecutorRouteStrategy  string  `json:"executorRouteStrategy"`
	ExecutorHandler        string  `json:"executorHandler"`
	ExecutorParam          string  `json:"executorParam"`
	ExecutorBlockStrategy  string  `json:"executorBlockStrategy"`
	ExecutorTimeout        int     `json:"executorTimeout"`
	ExecutorFailRetryCount int     `json:"executorFailRetryCount"`
	GlueType               string  `json:"glueType"`
	GlueSource             string  `json:"glueSource"`
	GlueRemark             string  `json:"glueRemark"`
	AddressList            string  `json:"addressList"`
	// TimeZone is the IANA zone of the job's CRON; "" is the admin's, absent keeps
	// the job's zone on updateJob.
	TimeZone *string `json:"timeZone"`
	// CalendarIDs are the job's exclusion calendars; absent keeps them on updateJob.
	CalendarIDs *[]int `json:"calendarIds"`
	// Tags are the job's tags; absent keeps them on updateJob.
	Tags *[]string `json:"tags"`
	manage.RetryBody
}

func (b jobBody) input() manage.JobInput {
	desc := ""
	if b.Name != nil {
		desc = *b.Name
	} else if b.JobDesc != nil {
		desc = *b.JobDesc
	}
	in := manage.JobInput{
		JobGroup: b.JobGroup, JobDesc: desc, Author: b.Author, AlarmEmail: b.AlarmEmail,
		ScheduleType: b.ScheduleType, ScheduleConf: b.ScheduleConf, MisfireStrategy: b.MisfireStrategy,
		ExecutorRouteStrategy: b.ExecutorRouteStrategy, ExecutorHandler: b.ExecutorHandler,
		ExecutorParam: b.ExecutorParam, ExecutorBlockStrategy: b.ExecutorBlockStrategy,
		ExecutorTimeout: b.ExecutorTimeout, ExecutorFailRetryCount: b.ExecutorFailRetryCount,
		GlueType: b.GlueType, GlueSource: b.GlueSource, GlueRemark: b.GlueRemark,
	}
	if b.TimeZone != nil {
		zone := strings.TrimSpace(*b.TimeZone)
		in.TimeZone = &zone
	}
	in.CalendarIDs, in.Tags, in.Retry = b.CalendarIDs, b.Tags, b.RetryBody.Input()
	if b.ID != nil {
		in.ID = *b.ID
	}
	return in
}

// Call runs one call for a caller already authenticated: app is "" for the global
// access token, or the app name whose group token was presented.
func (j *Jobs) Call(ctx context.Context, uri string, body []byte, app string) protocol.Reply {
	return j.run(ctx, uri, body, func() (caller, error) {
		p, err := j.Manage.APIPrincipal(ctx, app)
		key := CredentialKey(app, 0)
		return caller{p: p, who: key, key: key}, err
	})
}

// CallBearer runs one call for a caller presenting a scoped API token (the secret of
// "Authorization: Bearer"): unknown, revoked and expired tokens are refused, and a
// read-only token may make the read calls only.
func (j *Jobs) CallBearer(ctx context.Context, uri string, body []byte, secret string) protocol.Reply {
	return j.run(ctx, uri, body, func() (caller, error) {
		client := manage.ClientOf(ctx)
		keys := failKeys(client, secret)
		now := j.now()
		counted := keys
		if j.good.known(secret, now) {
			counted = keys[1:] // the client's refusals of other secrets do not block it
		}
		if j.failures().Blocked(counted, now) > 0 {
			return caller{}, errTooMany
		}
		p, t, err := j.Manage.TokenPrincipal(ctx, secret)
		if err != nil {
			if manage.IsKind(err, manage.Unauthenticated) {
				j.good.forget(secret)
				if i := j.failures().Add(keys, now); i >= 0 {
					j.Log.Warn("job openapi: refused bearer tokens of a client reached their limit; its calls with "+failScope(i)+
						" are answered 502 until the window ends", "client", client, "failures", keys[i].Max, "window", authFailWindow)
				}
			}
			c := caller{}
			if t.ID > 0 {
				// A known token refused (revoked, expired): the attempt is on record.
				c.refused = manage.Actor{Kind: manage.ActorAPIToken, Name: manage.TokenUser(t)}
				j.Log.Info("job openapi call refused", "call", uri, "token_id", t.ID, "err", err)
			}
			return c, err
		}
		j.good.add(secret, now)
		if p.ReadOnly() && (writeCalls[uri] || calendarWrites[uri] || drainWrites[uri]) {
			j.Log.Info("job openapi call refused", "call", uri, "token_id", t.ID, "err", "read-only token")
			return caller{refused: p.Actor()}, &manage.Error{Kind: manage.Denied, Msg: j.Manage.T("console_token_read_only")}
		}
		return caller{p: p, who: p.User.Username, key: CredentialKey("", t.ID)}, nil
	})
}

// failures is the bound on refused bearer authentications.
func (j *Jobs) failures() *window.Counter {
	j.failsOnce.Do(func() { j.fails = window.New(authFailWindow, authFailKeysMax) })
	return j.fails
}

func (j *Jobs) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// caller is who makes a call: the principal and how the log names it, or, for a
// refused known token, how the audit log names it.
type caller struct {
	p       manage.Principal
	who     string
	key     string // the limiter's bucket (CredentialKey)
	refused manage.Actor
}

// writeActions are the audit actions of the six calls.
var writeActions = map[string]string{"addJob": manage.ActionJobAdd, "updateJob": manage.ActionJobUpdate,
	"removeJob": manage.ActionJobRemove, "startJob": manage.ActionJobStart, "stopJob": manage.ActionJobStop,
	"triggerJob": manage.ActionJobTrigger}

// run reads the body, authenticates, applies the limiter and carries the call out.
// The limiter comes after authentication, as in HEAD's dispatcher, so that refused
// callers cannot use up the permits of everyone else. A change refused for want of
// permission — a token out of its groups, a read-only or revoked token — is recorded
// in the audit log as denied.
func (j *Jobs) run(ctx context.Context, uri string, body []byte, auth func() (caller, error)) protocol.Reply {
	admit := func() (caller, error) {
		who, err := auth()
		if err != nil {
			return who, err
		}
		if j.Limiter != nil && !j.Limiter.Wait(ctx, who.key) {
			return caller{}, errTooMany
		}
		return who, nil
	}
	if field, bad := nulField(body); bad {
		return protocol.Fail("invalid request, " + field + " may not hold a NUL character.")
	}
	if isWorkflowCall(uri) {
		return j.workflowCall(ctx, uri, body, admit)
	}
	if readCalls[uri] {
		return j.read(ctx, uri, body, admit)
	}
	if calendarCalls[uri] {
		return j.calendarCall(ctx, uri, body, admit)
	}
	if drainCalls[uri] {
		return j.drainCall(ctx, uri, body, admit)
	}
	if !writeCalls[uri] {
		return protocol.Fail(protocol.MsgURINotFound(uri))
	}
	var b jobBody
	if err := decode(body, &b, "job"); err != nil {
		return protocol.Fail(err.Error())
	}
	if uri != "addJob" && (b.ID == nil || *b.ID <= 0) {
		return protocol.Fail("invalid request, id missing or not a positive number.")
	}
	id := 0
	if b.ID != nil {
		id = *b.ID
	}
	if msg := outOfInt(intField{"id", int64(id)}, intField{"jobGroup", int64(b.JobGroup)},
		intField{"executorTimeout", int64(b.ExecutorTimeout)}, intField{"executorFailRetryCount", int64(b.ExecutorFailRetryCount)}); msg != "" {
		return protocol.Fail(msg)
	}
	target := ""
	if b.ID != nil && uri != "addJob" {
		target = strconv.Itoa(*b.ID)
	}
	denied := manage.Change{Action: writeActions[uri], TargetKind: manage.TargetJob, TargetID: target, Outcome: manage.OutcomeDenied}
	who, err := admit()
	if err != nil {
		return j.refused(ctx, uri, who, denied, err)
	}
	p := who.p
	switch uri {
	case "addJob":
		id, err := j.Manage.APIAddJob(ctx, p, b.input())
		if err != nil {
			return j.changeFailed(ctx, uri, p, denied, err)
		}
		j.Log.Info("job openapi call", "call", uri, "job_id", id, "caller", who.who)
		return success(strconv.Quote(strconv.Itoa(id)))
	case "updateJob":
		err = j.Manage.APIUpdateJob(ctx, p, b.input())
	case "removeJob":
		err = j.Manage.RemoveJob(ctx, p, *b.ID)
	case "startJob":
		err = j.Manage.StartJob(ctx, p, *b.ID)
	case "stopJob":
		err = j.Manage.StopJob(ctx, p, *b.ID)
	case "triggerJob":
		err = j.Manage.TriggerJob(ctx, p, *b.ID, b.ExecutorParam, b.AddressList)
	}
	if err != nil {
		return j.changeFailed(ctx, uri, p, denied, err)
	}
	j.Log.Info("job openapi call", "call", uri, "job_id", *b.ID, "caller", who.who)
	return success("")
}

// intField is a number of a body that an INT column holds or is compared with.
type intField struct {
	name string
	v    int64
}

// outOfInt names the first field outside the INT columns' 32 bits, "" when none: HEAD
// reads these fields as Java ints and refuses such a body, and PostgreSQL fails a
// statement with such a value (where MySQL finds no row).
func outOfInt(fs ...intField) string {
	for _, f := range fs {
		if f.v > math.MaxInt32 || f.v < math.MinInt32 {
			return "invalid request, " + f.name + " out of range."
		}
	}
	return ""
}

// refused answers a caller the credentials or the limiter refused; a known token
// refused (revoked, expired, read-only) is recorded as a denied change.
func (j *Jobs) refused(ctx context.Context, uri string, who caller, denied manage.Change, err error) protocol.Reply {
	if who.refused.Kind != "" && denied.Action != "" {
		j.Manage.RecordAs(ctx, who.refused, denied)
	}
	return j.failure(uri, err)
}

// changeFailed answers a change the rules refused; one refused for want of
// permission is recorded as denied.
func (j *Jobs) changeFailed(ctx context.Context, uri string, p manage.Principal, denied manage.Change, err error) protocol.Reply {
	if manage.IsKind(err, manage.Denied) && denied.Action != "" {
		j.Manage.Record(ctx, p, denied)
	}
	return j.failure(uri, err)
}

// decode reads a JSON object body into v, refusing trailing text; what names the
// object in the message.
func decode(body []byte, v any, what string) error {
	if err := json.Unmarshal(bytes.TrimSpace(body), v); err != nil {
		return errors.New("invalid request, body is not a JSON " + what + " object: " + oneLine(err))
	}
	return nil
}

// success is HEAD's success reply ("Success", 3.3.0+), with data when given.
func success(data string) protocol.Reply {
	r := protocol.Reply{Code: protocol.CodeSuccess, Msg: "Success"}
	if data != "" {
		r.Payload = json.RawMessage(data)
	}
	return r
}

// failure answers a rule's refusal with its message; anything else is internal and
// only logged.
func (j *Jobs) failure(uri string, err error) protocol.Reply {
	if errors.Is(err, errTooMany) {
		return protocol.Reply{Code: CodeTooMany, Msg: MsgTooMany}
	}
	var e *manage.Error
	if errors.As(err, &e) {
		return protocol.Fail(e.Msg)
	}
	j.Log.Error("job openapi call failed", "call", uri, "err", err)
	return protocol.Fail("openapi invoke error: internal error, see the admin's log")
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Mount serves Document at <prefix>/api/openapi.json for every prefix ("" is the
// root). Mount it before the executor API, whose /api/:uri would answer it otherwise.
func Mount(app *fiber.App, prefixes ...string) {
	seen := map[string]bool{}
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if seen[p] {
			continue
		}
		seen[p] = true
		app.Get(p+"/api/openapi.json", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
			return c.Send(Document)
		})
	}
}
