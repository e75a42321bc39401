// Package manage is the domain side of the web console: sign-in and sessions, the
// permission rules, and the validated job, executor, log, GLUE and user operations the
// console's handlers call. It never sees HTTP types: the handlers (JSON endpoints) are
// in routes/console, the HTML pages in ui.
package manage

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Scheduler is what the console needs from the scheduling core; *scheduler.Scheduler
// implements it.
type Scheduler interface {
	Accept(ctx context.Context, reqs ...scheduler.TriggerRequest) error
	StartJob(ctx context.Context, id int) error
	StopJob(ctx context.Context, id int) error
	Kill(ctx context.Context, logID int64) (scheduler.KillResult, error)
	NextFireTime(job schema.Job, from time.Time) (time.Time, bool, error)
	CheckForeignScanner(ctx context.Context) (string, error)
}

// LogReader reads an execution's rolling log from its executor;
// scheduler.HTTPExecutor implements it.
type LogReader interface {
	Log(ctx context.Context, t scheduler.Target, logDateTim, logID int64, from int) (protocol.LogResult, int, string)
}

// Config wires a Service.
type Config struct {
	Store     *schema.Store
	Scheduler Scheduler
	Logs      LogReader
	// Clock is the time source; clock.Real when nil.
	Clock clock.Clock
	// Location is the zone of DATETIME columns and of dates shown and parsed (the
	// database connection's zone); time.Local when nil.
	Location *time.Location
	// Lang selects the message texts (xxl.job.i18n).
	Lang i18n.Lang
	// P3 calls executors with the 3.5 protocol (group app name and token).
	P3 bool
	// LoginFailures is how many failed sign-ins of one user name from one client
	// address are allowed per LoginWindow before further attempts of that pair are
	// refused; 10 when 0.
	LoginFailures int
	// LoginFailuresPerAddress is how many failed sign-ins of any user names one client
	// address may make per LoginWindow before it is refused altogether; 100 when 0.
	LoginFailuresPerAddress int
	// LoginWindow is the rate-limit window; one minute when 0.
	LoginWindow time.Duration
	// LDAP checks the password form's users that have no local password against a
	// directory; nil for none.
	LDAP *LDAP
	// OIDC is the OpenID Provider of the "Sign in with" button; nil for none.
	OIDC *OIDC
	// NoLocalLogin refuses the passwords of local users
	// (xxl.admin.auth.local.enabled=false): only the providers sign users in.
	NoLocalLogin bool
	// Workflows is the workflow engine; nil when workflows are off.
	Workflows *workflow.Engine
	Logger    *slog.Logger
}

// Service carries out console operations. It is safe for concurrent use.
type Service struct {
	store  *schema.Store
	layout schema.Layout
	sched  Scheduler
	logs   LogReader
	clk    clock.Clock
	loc    *time.Location
	msgs   i18n.Bundle
	p3     bool
	log    *slog.Logger
	limit  *window.Counter
	audit  auditCounts

	loginFailures, addrFailures int

	ldap       *LDAP
	oidc       *OIDC
	localLogin bool
	wf         *workflow.Engine

	sessMu sync.Mutex
	sess   sessionStore // nil until PrepareSessions decides
	legacy legacyNote
	// denials keeps repeated refusals from filling the audit log.
	denials denialThrottle
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LoginFailures <= 0 {
		cfg.LoginFailures = 10
	}
	if cfg.LoginFailuresPerAddress <= 0 {
		cfg.LoginFailuresPerAddress = 100
	}
	if cfg.LoginWindow <= 0 {
		cfg.LoginWindow = time.Minute
	}
	// limiterCap bounds the keys the sign-in limiter tracks; past it expired ones are
	// swept and, if still full, new keys are not tracked (their address key still is).
	const limiterCap = 100000
	return &Service{
		store: cfg.Store, layout: cfg.Store.Layout(), sched: cfg.Scheduler, logs: cfg.Logs,
		clk: cfg.Clock, loc: cfg.Location, msgs: i18n.For(cfg.Lang), p3: cfg.P3, log: cfg.Logger,
		limit: window.New(cfg.LoginWindow, limiterCap), loginFailures: cfg.LoginFailures, addrFailures: cfg.LoginFailuresPerAddress,
		ldap: cfg.LDAP, oidc: cfg.OIDC, localLogin: !cfg.NoLocalLogin, wf: cfg.Workflows,
	}
}

// Layout is the table layout of the database.
func (s *Service) Layout() schema.Layout { return s.layout }

// Location is the zone dates are shown and parsed in.
func (s *Service) Location() *time.Location { return s.loc }

// T returns a message text of the configured language.
func (s *Service) T(key string) string { return s.msgs.T(key) }

// Kind classifies an Error.
type Kind int

// Error kinds. Every kind is answered with a failure envelope carrying Msg; the kind
// lets handlers and tests tell them apart.
const (
	// Invalid is bad input or a refused state change.
	Invalid Kind = iota
	// Denied is a permission failure.
	Denied
	// NotFound is a missing row the operation needs.
	NotFound
	// Limited is a refused sign-in after too many failures.
	Limited
	// Unauthenticated is a missing or invalid session.
	Unauthenticated
)

// Error is an expected failure with a message for the user, in the configured
// language. Anything else a Service returns is an internal (database) error.
type Error struct {
	Kind Kind
	Msg  string
	// Key is the message's text key ("console_login_local_user"), for callers that
	// answer some failures their own way.
	Key string
	// Target is the id a denied change names in the audit log when the caller did not
	// give it (the workflow of a run acted on by its run id); "" otherwise.
	Target string
	// args are Key's arguments as given — text, a field or a cron refusal — so that
	// In can say the message in another language.
	args []any
}

// In returns the message in language l, for the console's pages, which speak the
// language the person chose. Msg keeps the configured language and, where the
// console words a failure better than upstream (a refused cron expression), the
// upstream wording that scripts may compare.
func (e *Error) In(l i18n.Lang) string {
	if e.Key == "" {
		return e.Msg
	}
	return renderMsg(i18n.For(l), e.Key, e.args)
}

func (e *Error) Error() string { return e.Msg }

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

func (s *Service) fail(k Kind, key string, args ...any) *Error {
	return &Error{Kind: k, Msg: renderMsg(s.msgs, key, args), Key: key, args: args}
}

// format fills {0}, {1}, … placeholders.
func format(pattern string, args ...string) string {
	for i, a := range args {
		pattern = strings.ReplaceAll(pattern, "{"+strconv.Itoa(i)+"}", a)
	}
	return pattern
}

func (s *Service) errInput(field string) *Error {
	return s.fail(Invalid, "console_input", fieldName(field))
}

func (s *Service) errChoose(field string) *Error {
	return s.fail(Invalid, "console_choose", fieldName(field))
}

func (s *Service) errInvalid(field string) *Error {
	return s.fail(Invalid, "console_invalid", fieldName(field))
}

func (s *Service) errNotFound(field string) *Error {
	return s.fail(NotFound, "console_not_found", fieldName(field))
}

func (s *Service) errDenied() *Error { return s.fail(Denied, "console_denied") }

func (s *Service) errAdminOnly() *Error { return s.fail(Denied, "console_admin_only") }

// Msg returns a message text of the configured language with its {0}, {1}, …
// placeholders filled.
func (s *Service) Msg(key string, args ...string) string { return format(s.msgs.T(key), args...) }

// MsgIn is Msg in language l.
func MsgIn(l i18n.Lang, key string, args ...string) string {
	return format(i18n.For(l).T(key), args...)
}

// checkLen refuses a value longer than max characters (the column's size), so the
// user reads which field is too long instead of a database error.
func (s *Service) checkLen(field, v string, max int) error {
	if n := len([]rune(v)); n > max {
		return s.fail(Invalid, "console_too_long", fieldName(field), strconv.Itoa(max))
	}
	return nil
}

// javaBlank is Java's StringUtils.isBlank on trimmed text: empty after trimming
// characters <= ' '.
func javaBlank(v string) bool { return javaTrim(v) == "" }

// atoi32 parses an id of an INT column, as Java's Integer.parseInt: a value outside
// 32 bits is not a number, rather than a statement PostgreSQL fails (MySQL would find
// no row).
func atoi32(v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	return int(n), err
}

// javaTrim strips leading and trailing characters <= ' ', as String.trim.
func javaTrim(v string) string {
	return strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })
}

// hasAngle reports '<' or '>', which names and addresses may not contain (they end up
// in pages).
func hasAngle(v string) bool { return strings.ContainsAny(v, "<>") }
