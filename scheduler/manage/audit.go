package manage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The audit log records every change made through the console or the job OpenAPI —
// who, when, from which address, what changed — in xxl_admin_audit.
//
// How to record a change (any rule of this package, or a caller outside it such as the
// API tokens): once the change is made, call
//
//	s.Record(ctx, p, Change{Action: ActionTokenCreate, TargetKind: TargetToken, TargetID: id,
//		Fields: Diff(nil, tokenView, nil)})
//
// p is the principal that made the change; its Actor names it (the console user, the
// API token under its TokenUser name, or whatever WithActor set). Without a principal
// (sign-ins, the admin itself) use RecordAs. The client address comes from the context
// (WithClient, set by the HTTP handlers). Fields are the changed fields before and
// after: build them with Diff from two values of one struct type, or by hand; secrets
// are masked (FieldRules.Mask, Masked) and long texts digested (FieldRules.Digest).
// Called inside a transaction (Store.InTx), the entry is written once the transaction
// commits, and not at all when it rolls back.
//
// Recording never fails the change: the entry is written after it, on its own,
// outside the change's transaction (a failed statement would abort a PostgreSQL
// transaction, and a Java-created database may lack the table), in one write bounded
// by auditWriteTimeout. When that write fails, the whole entry goes to the log at
// error level ("audit entry not written", with every field), so that it is kept there
// and log alerting sees it.

// Actor kinds (xxl_admin_audit.actor_kind).
const (
	// ActorUser is a console user signed in with a session.
	ActorUser = "user"
	// ActorAPIToken is a scoped API token; the actor is its name.
	ActorAPIToken = "api_token"
	// ActorAccessToken is the global access token (xxl.job.accessToken) or a 3.5
	// group's token authorising a job OpenAPI call.
	ActorAccessToken = "access_token"
	// ActorAnonymous is a caller without credentials: a failed sign-in, whose actor is
	// the user name tried.
	ActorAnonymous = "anonymous"
	// ActorSystem is the admin itself, or a directory or identity provider acting
	// through it (the actor is the provider's name).
	ActorSystem = "system"
)

// Outcomes (xxl_admin_audit.outcome).
const (
	// OutcomeOK is a change made.
	OutcomeOK = "ok"
	// OutcomeFailed is a refused attempt that is recorded: a wrong password.
	OutcomeFailed = "failed"
	// OutcomeDenied is an attempt refused for lack of permission (a token out of
	// scope, for instance).
	OutcomeDenied = "denied"
)

// Actions (xxl_admin_audit.action). The Audit page names each in the three languages
// (ui texts audit_action_<action>); a new action needs its texts there.
const (
	ActionJobAdd       = "job.add"
	ActionJobUpdate    = "job.update"
	ActionJobRemove    = "job.remove"
	ActionJobStart     = "job.start"
	ActionJobStop      = "job.stop"
	ActionJobTrigger   = "job.trigger"
	ActionGlueSave     = "glue.save"
	ActionLogKill      = "log.kill"
	ActionLogClear     = "log.clear"
	ActionGroupAdd     = "group.add"
	ActionGroupUpdate  = "group.update"
	ActionGroupRemove  = "group.remove"
	ActionGroupDrain   = "group.drain"
	ActionGroupUndrain = "group.undrain"
	ActionUserAdd      = "user.add"
	ActionUserUpdate   = "user.update"
	ActionUserRemove   = "user.remove"
	ActionUserPassword = "user.password"
	ActionSignIn       = "signin"
	ActionSignInFailed = "signin.failed"
	ActionSignOut      = "signout"
	ActionTokenCreate  = "token.create"
	ActionTokenRevoke  = "token.revoke"

	ActionWorkflowAdd     = "workflow.add"
	ActionWorkflowUpdate  = "workflow.update"
	ActionWorkflowRemove  = "workflow.remove"
	ActionWorkflowTrigger = "workflow.trigger"
	ActionWorkflowCancel  = "workflow.cancel"
	ActionWorkflowRerun   = "workflow.rerun"
)

// Actions lists every action, in the order the Audit page's filter offers them.
var Actions = []string{
	ActionJobAdd, ActionJobUpdate, ActionJobRemove, ActionJobStart, ActionJobStop, ActionJobTrigger, ActionGlueSave,
	ActionLogKill, ActionLogClear, ActionGroupAdd, ActionGroupUpdate, ActionGroupRemove, ActionGroupDrain, ActionGroupUndrain,
	ActionUserAdd, ActionUserUpdate, ActionUserRemove, ActionUserPassword,
	ActionSignIn, ActionSignInFailed, ActionSignOut, ActionTokenCreate, ActionTokenRevoke,
	ActionWorkflowAdd, ActionWorkflowUpdate, ActionWorkflowRemove, ActionWorkflowTrigger, ActionWorkflowCancel, ActionWorkflowRerun,
}

// Target kinds (xxl_admin_audit.target_kind).
const (
	TargetJob   = "job"
	TargetGroup = "group"
	TargetUser  = "user"
	TargetLog   = "log"
	TargetToken = "token"
	// TargetWorkflow is a workflow; its runs are recorded under their workflow.
	TargetWorkflow = "workflow"
)

// TargetKinds lists every target kind, in the order the Audit page's filter offers them.
var TargetKinds = []string{TargetJob, TargetGroup, TargetUser, TargetLog, TargetToken, TargetWorkflow}

// Masked stands for a secret's value in the audit log: it says the secret was set or
// changed without saying to what.
const Masked = "******"

// Actor names who makes a change, as the audit log records it.
type Actor struct {
	// Kind is one of the Actor* constants.
	Kind string
	// Name is the user name, token name, or which access token was used.
	Name string
}

// WithActor returns p recorded in the audit log as a (the job OpenAPI's access tokens
// name themselves so).
func (p Principal) WithActor(a Actor) Principal {
	p.actor = a
	return p
}

// Actor is who p is in the audit log: the actor set with WithActor; else an API
// token under its TokenUser name; else the console user.
func (p Principal) Actor() Actor {
	if p.actor.Kind != "" {
		return p.actor
	}
	if p.Via == SessionAPIToken {
		return Actor{Kind: ActorAPIToken, Name: p.User.Username}
	}
	return Actor{Kind: ActorUser, Name: p.User.Username}
}

type clientKey struct{}

// WithClient returns ctx carrying the client address of the request it serves; the
// audit log records it with every change made under ctx.
func WithClient(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientKey{}, addr)
}

// ClientOf is the client address WithClient put in ctx, or "".
func ClientOf(ctx context.Context) string {
	a, _ := ctx.Value(clientKey{}).(string)
	return a
}

// FieldChange is one changed field with its value before and after the change. Before
// is absent when the field came into being (a creation), After when it went away (a
// deletion).
type FieldChange struct {
	Field  string  `json:"field"`
	Before *string `json:"before,omitempty"`
	After  *string `json:"after,omitempty"`
}

// Change is an entry of the audit log as its caller describes it.
type Change struct {
	// Action is one of the Action* constants.
	Action string
	// TargetKind (a Target* constant) and TargetID name what was changed.
	TargetKind, TargetID string
	// Fields are the changed fields (nil for actions without fields, as a start).
	Fields []FieldChange
	// Outcome is OutcomeOK when empty.
	Outcome string
}

// FieldRules say how Diff treats some fields of a struct, by field name as recorded
// (the Go name with a lower-case first letter and a final ID written Id: jobDesc,
// glueSource, jobId).
type FieldRules struct {
	// Skip are fields left out (kept up by the system, as update times).
	Skip []string
	// Mask are secrets: recorded as Masked when set or changed.
	Mask []string
	// Digest are long texts recorded as a digest (lines, bytes, SHA-256 prefix) instead
	// of their content.
	Digest []string
}

// Diff lists the fields of before and after — values (or pointers) of one struct type
// — that differ, in declaration order. A nil before is a creation (every field of after
// that is not zero); a nil after a deletion (every field of before that is not zero).
// Times are rendered in UTC as yyyy-MM-dd HH:mm:ss; nested structs are not walked.
func Diff(before, after any, rules *FieldRules) []FieldChange {
	if rules == nil {
		rules = &FieldRules{}
	}
	bv, av := structValue(before), structValue(after)
	t := bv
	if !t.IsValid() {
		t = av
	}
	if !t.IsValid() {
		return nil
	}
	var out []FieldChange
	for i := range t.NumField() {
		sf := t.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		name := lowerFirst(sf.Name)
		if contains(rules.Skip, name) {
			continue
		}
		both := bv.IsValid() && av.IsValid()
		// Compared as recorded, so that any field type works (slices, maps) and two
		// times of one second in different zones are the same.
		if both && render(bv.Field(i)) == render(av.Field(i)) {
			continue
		}
		// A creation or deletion lists the fields that hold something; a change shows
		// both sides, zero values included.
		var b, a *string
		if bv.IsValid() && (both || !bv.Field(i).IsZero()) {
			v := render(bv.Field(i))
			b = &v
		}
		if av.IsValid() && (both || !av.Field(i).IsZero()) {
			v := render(av.Field(i))
			a = &v
		}
		if b == nil && a == nil {
			continue
		}
		switch {
		case contains(rules.Mask, name):
			b, a = maskPtr(b), maskPtr(a)
		case contains(rules.Digest, name):
			b, a = digestPtr(b), digestPtr(a)
		}
		out = append(out, FieldChange{Field: name, Before: b, After: a})
	}
	return out
}

func structValue(v any) reflect.Value {
	if v == nil {
		return reflect.Value{}
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return reflect.Value{}
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return rv
}

func render(v reflect.Value) string {
	if t, ok := v.Interface().(time.Time); ok {
		return t.UTC().Format(DateTimeLayout)
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return v.Type().String()
	}
	return string(b)
}

// lowerFirst is a Go field name as xxl-job's JSON spells it: JobDesc jobDesc, ID id,
// JobID jobId.
func lowerFirst(s string) string {
	if strings.HasSuffix(s, "ID") {
		s = s[:len(s)-2] + "Id"
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func maskPtr(v *string) *string {
	if v == nil {
		return nil
	}
	m := ""
	if *v != "" {
		m = Masked
	}
	return &m
}

func digestPtr(v *string) *string {
	if v == nil {
		return nil
	}
	d := Digest(*v)
	return &d
}

// Digest summarises a long text for the audit log: its lines, bytes and the first 12
// hex digits of its SHA-256 ("" for ""). GLUE sources are recorded this way: scripts
// often hold credentials, and every saved version is in the GLUE history anyway.
func Digest(v string) string {
	if v == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(v))
	lines := strings.Count(v, "\n")
	if !strings.HasSuffix(v, "\n") {
		lines++
	}
	return strconv.Itoa(lines) + " lines, " + strconv.Itoa(len(v)) + " bytes, sha256 " + hex.EncodeToString(sum[:6])
}

// auditCounts counts audit writes since the start.
type auditCounts struct{ ok, fail atomic.Int64 }

// AuditWrites reports how many audit entries were written and how many could not be
// (and went to the log instead) since the start.
func (s *Service) AuditWrites() (ok, failed int64) { return s.audit.ok.Load(), s.audit.fail.Load() }

// Record writes a change p made to the audit log; see the top of this file.
func (s *Service) Record(ctx context.Context, p Principal, c Change) {
	s.RecordAs(ctx, p.Actor(), c)
}

// RecordAs writes a change to the audit log in the name of an actor without a
// principal: a sign-in (the user about to have a session) or a failed one (the user
// name tried, ActorAnonymous). Denied attempts are recorded sparingly (denialThrottle).
func (s *Service) RecordAs(ctx context.Context, a Actor, c Change) {
	if c.Outcome == OutcomeDenied {
		now := s.clk.Now()
		ok, skipped := s.denials.admit(a, c, now)
		if !ok {
			if skipped > 0 {
				s.log.Warn("audit: repeated denied attempts not recorded", "skipped", skipped, "since", deniedWindow,
					"actor", a.Name, "actor_kind", a.Kind, "action", c.Action, "target_kind", c.TargetKind, "target_id", c.TargetID)
			}
			return
		}
	}
	e := schema.AuditEntry{Time: s.clk.Now().UnixMilli(), Actor: a.Name, ActorKind: a.Kind, Client: ClientOf(ctx),
		Action: c.Action, TargetKind: c.TargetKind, TargetID: c.TargetID, Outcome: c.Outcome}
	if e.Outcome == "" {
		e.Outcome = OutcomeOK
	}
	if len(c.Fields) > 0 {
		b, err := json.Marshal(c.Fields)
		if err == nil {
			e.Changes = string(b)
		}
	}
	write := func() {
		// On its own: never inside the change's transaction, never cancelled with the
		// request that made the change.
		wctx, cancel := context.WithTimeout(context.Background(), auditWriteTimeout)
		defer cancel()
		if _, err := s.store.InsertAudit(wctx, e); err != nil {
			s.audit.fail.Add(1)
			s.log.Error("audit entry not written", "err", err, "time", time.UnixMilli(e.Time).UTC().Format(time.RFC3339Nano),
				"actor", e.Actor, "actor_kind", e.ActorKind, "client", e.Client, "action", e.Action,
				"target_kind", e.TargetKind, "target_id", e.TargetID, "changes", e.Changes, "outcome", e.Outcome)
			return
		}
		s.audit.ok.Add(1)
	}
	if !s.store.AfterCommit(ctx, write) {
		write()
	}
}

// Denied attempts are recorded sparingly, so that a script retrying with a revoked
// token, or walking jobs out of its token's scope, cannot fill the table: one denied
// entry per actor, action and target a minute, and at most deniedPerActor denied
// entries per actor a minute. The others are not recorded; their number is logged at
// most once a minute ("audit: repeated denied attempts not recorded", with the last
// one's actor, action and target).
const (
	deniedWindow   = time.Minute
	deniedPerActor = 10
	// deniedKeysMax bounds the keys tracked; past it expired ones are swept and, if it
	// is still full, attempts of new keys are not recorded.
	deniedKeysMax = 10000
)

// denialThrottle counts denied entries in fixed windows per actor, action and target
// and per actor. Its zero value is ready.
type denialThrottle struct {
	once     sync.Once
	counts   *window.Counter
	mu       sync.Mutex
	skipped  int
	reported time.Time
}

// admit reports whether a denied attempt of a at now may be recorded; when it may
// not, skipped is the number of attempts not recorded to log now (0: not yet).
func (d *denialThrottle) admit(a Actor, c Change, now time.Time) (ok bool, skipped int) {
	d.once.Do(func() { d.counts = window.New(deniedWindow, deniedKeysMax) })
	actor := a.Kind + "\x00" + a.Name
	if d.counts.Take([]window.Key{{Name: actor, Max: deniedPerActor},
		{Name: actor + "\x00" + c.Action + "\x00" + c.TargetKind + "\x00" + c.TargetID, Max: 1}}, now) {
		return true, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.skipped++
	if d.reported.IsZero() || now.Sub(d.reported) >= deniedWindow {
		skipped, d.skipped, d.reported = d.skipped, 0, now
	}
	return false, skipped
}

// auditWriteTimeout bounds one audit write, so that a database that stopped answering
// holds a request up no longer than this.
const auditWriteTimeout = 5 * time.Second

// AuditQuery filters the Audit page.
type AuditQuery struct {
	// From and To bound the time (both inclusive); zero leaves that end open.
	From, To time.Time
	// Actor, Action, TargetKind and TargetID match exactly when not empty.
	Actor, Action, TargetKind, TargetID string
}

// ListAudit returns a page of the audit log, newest first (administrators only).
func (s *Service) ListAudit(ctx context.Context, p Principal, q AuditQuery, offset, limit int) ([]schema.AuditEntry, int, error) {
	if !p.Admin() {
		return nil, 0, s.errAdminOnly()
	}
	f := schema.AuditFilter{Actor: strings.TrimSpace(q.Actor), Action: strings.TrimSpace(q.Action),
		TargetKind: strings.TrimSpace(q.TargetKind), TargetID: strings.TrimSpace(q.TargetID)}
	if !q.From.IsZero() {
		f.From = q.From.UnixMilli()
	}
	if !q.To.IsZero() {
		f.To = q.To.UnixMilli()
	}
	return s.store.ListAudit(ctx, f, offset, limit)
}

// Field rules of the audited rows: times the system keeps up are left out, secrets
// masked, GLUE sources digested.
var (
	jobRules = &FieldRules{Skip: []string{"addTime", "updateTime", "glueUpdatetime", "triggerLastTime", "triggerNextTime"},
		Digest: []string{"glueSource"}}
	groupRules = &FieldRules{Skip: []string{"updateTime"}, Mask: []string{"accessToken"}}
	userRules  = &FieldRules{Skip: []string{"token"}, Mask: []string{"password"}}
)

func itoa(id int) string { return strconv.Itoa(id) }

// PrepareAudit creates xxl_admin_audit when it is missing (the wiring calls it at
// start). When the database user may not create it, or the database does not answer,
// it warns once; entries are then written to the log instead (see Record) until
// `xxl-admin-go schema upgrade` adds the table.
func (s *Service) PrepareAudit(ctx context.Context) {
	s.prepareTable(ctx, schema.AuditTable, "audit log", "entries go to this log only",
		s.store.HasAuditTable, s.store.CreateAuditTable)
}

// prepareTable creates a table of this admin's own at start when it is missing (the
// admin of an embedded file holds it, so `schema upgrade` cannot run beside it). When
// the table cannot be created, or the database does not answer, it warns once, saying
// what goes without the table (without) until `schema upgrade` adds it. feature names
// what the table serves in both lines.
func (s *Service) prepareTable(ctx context.Context, table, feature, without string,
	has func(context.Context) (bool, error), create func(context.Context) error) {
	ok, err := has(ctx)
	if err == nil && ok {
		return
	}
	if err == nil {
		if err = create(ctx); err == nil {
			s.log.Info("created table " + table + " for the " + feature)
			return
		}
	}
	s.log.Warn(feature+": table "+table+" is missing and could not be created; "+without+
		" until `xxl-admin-go schema upgrade` adds it", "err", err)
}

// ParseAuditTime reads a time filter of the Audit page in the service's zone:
// "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm" or "yyyy-MM-dd" (with end, the last
// millisecond of that minute or day, so that a "to" bound includes it). "" is the zero
// time (no bound). field names the filter in the error ("audit_from", "audit_to").
func (s *Service) ParseAuditTime(field, v string, end bool) (time.Time, error) {
	v = strings.TrimSpace(strings.Replace(v, "T", " ", 1))
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range []struct {
		layout string
		span   time.Duration
	}{{DateTimeLayout, time.Second}, {"2006-01-02 15:04", time.Minute}, {"2006-01-02", 24 * time.Hour}} {
		t, err := time.ParseInLocation(l.layout, v, s.loc)
		if err != nil {
			continue
		}
		if end {
			if l.span == 24*time.Hour {
				t = t.AddDate(0, 0, 1) // a calendar day, whatever daylight saving does
			} else {
				t = t.Add(l.span)
			}
			t = t.Add(-time.Millisecond)
		}
		return t, nil
	}
	return time.Time{}, s.errInvalid(field)
}
