package ui

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The page handlers. Each reads what the first paint needs (filters, options, one
// row); lists are fetched by the page's script from the JSON endpoints.

// LoginPage answers /toLogin and /auth/login for browsers without a session (pass it
// as console.Deps.LoginPage).
func (u *UI) LoginPage(c *fiber.Ctx) error {
	p := u.newPage(c, "login", "login_title")
	p.Boot["login"] = u.ctx + "/auth/doLogin"
	p.Boot["home"] = u.ctx + "/"
	opts := u.Manage.SignInOptions()
	d := loginData{Password: opts.Password, OIDC: opts.OIDC, OIDCURL: u.ctx + console.OIDCLoginPath}
	if key, ok := ssoErrors[c.Query(console.SSOErrorParam)]; ok {
		d.Error = p.T(key)
	}
	p.Data = d
	return u.render(c, fiber.StatusOK, p)
}

// loginData is what the login page offers.
type loginData struct {
	// Password shows the password form; OIDC, when set, the provider's button.
	Password      bool
	OIDC, OIDCURL string
	// Error says why a provider's sign-in came back failed.
	Error string
}

// ssoErrors are the texts of console.SSOErrorParam's values; other values show
// nothing (the parameter is in a link anyone can send).
var ssoErrors = map[string]string{
	console.SSOFailed:        "login_sso_failed",
	console.SSOLocalUser:     "login_sso_local_user",
	console.SSOOtherIdentity: "login_sso_other_identity",
	console.SSOBadName:       "login_sso_bad_name",
	console.SSOLimited:       "login_sso_limited",
}

// groupRef is an executor group as filters and forms show it.
type groupRef struct {
	ID      int    `json:"id"`
	AppName string `json:"appname"`
	Title   string `json:"title"`
}

func groupRefs(gs []schema.Group) []groupRef {
	out := make([]groupRef, len(gs))
	for i, g := range gs {
		out[i] = groupRef{ID: g.ID, AppName: g.AppName, Title: g.Title}
	}
	return out
}

func (u *UI) dashboard(c *fiber.Ctx) error {
	t, err := u.Manage.DashboardTotals(c.UserContext())
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newPage(c, "dashboard", "dash_title")
	rate := ""
	if t.JobLogCount > 0 {
		rate = strings.TrimSuffix(strconv.FormatFloat(float64(t.JobLogSuccessCount)*100/float64(t.JobLogCount), 'f', 1, 64), ".0")
	}
	p.Data = struct {
		manage.Totals
		Rate string
	}{t, rate}
	return u.render(c, fiber.StatusOK, p)
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// glueLabels are the run-mode names xxl-job users know (not translated upstream either).
var glueLabels = map[string]string{
	"BEAN": "BEAN", "GLUE_GROOVY": "GLUE(Java)", "GLUE_SHELL": "GLUE(Shell)", "GLUE_PYTHON": "GLUE(Python)",
	"GLUE_PYTHON2": "GLUE(Python2)", "GLUE_PHP": "GLUE(PHP)", "GLUE_NODEJS": "GLUE(Nodejs)", "GLUE_POWERSHELL": "GLUE(PowerShell)",
}

func (u *UI) glueLabel(t string) string {
	if t == "GLUE_PYTHON" && u.Manage.Layout().UserToken {
		return "GLUE(Python3)" // 3.2+ split Python into 2 and 3
	}
	if l, ok := glueLabels[t]; ok {
		return l
	}
	return t
}

// glueStarters are the first versions of new GLUE jobs: a runnable skeleton that
// shows where the parameter and the shard numbers arrive.
var glueStarters = map[string]string{
	"GLUE_GROOVY": `import com.xxl.job.core.context.XxlJobHelper;
import com.xxl.job.core.handler.IJobHandler;

public class GlueJob extends IJobHandler {

    @Override
    public void execute() throws Exception {
        String param = XxlJobHelper.getJobParam();
        XxlJobHelper.log("glue job started, param: " + param);
        // your work here
    }
}
`,
	"GLUE_SHELL": `#!/bin/bash
# $1: job parameter, $2: shard index, $3: shard total
echo "glue job started at $(date '+%F %T')"
echo "param: $1, shard: $2/$3"

# your work here

exit 0
`,
	"GLUE_PYTHON": `#!/usr/bin/env python3
# argv[1]: job parameter, argv[2]: shard index, argv[3]: shard total
import sys

args = sys.argv[1:] + ["", "", ""]
print("glue job started, param: %s, shard: %s/%s" % (args[0], args[1], args[2]))

# your work here
sys.exit(0)
`,
	"GLUE_PYTHON2": `#!/usr/bin/env python2
# -*- coding: utf-8 -*-
# argv[1]: job parameter, argv[2]: shard index, argv[3]: shard total
import sys

args = sys.argv[1:] + ["", "", ""]
print "glue job started, param: %s, shard: %s/%s" % (args[0], args[1], args[2])

# your work here
sys.exit(0)
`,
	"GLUE_PHP": `<?php
// $argv[1]: job parameter, $argv[2]: shard index, $argv[3]: shard total
$param = $argv[1] ?? '';
echo "glue job started, param: " . $param . "\n";

// your work here
exit(0);
`,
	"GLUE_NODEJS": `#!/usr/bin/env node
// argv[2]: job parameter, argv[3]: shard index, argv[4]: shard total
const [param = '', index = '', total = ''] = process.argv.slice(2)
console.log('glue job started, param: ' + param + ', shard: ' + index + '/' + total)

// your work here
process.exit(0)
`,
	"GLUE_POWERSHELL": `# $args[0]: job parameter, $args[1]: shard index, $args[2]: shard total
Write-Output "glue job started, param: $($args[0]), shard: $($args[1])/$($args[2])"

# your work here
exit 0
`,
}

// jobOptions are the option lists of the job form, labelled in the page's language.
type jobOptions struct {
	ScheduleTypes []option
	Misfires      []option
	Routes        []option
	Blocks        []option
	GlueTypes     []option
}

func (u *UI) jobOptions(p *page) jobOptions {
	var o jobOptions
	for _, v := range []string{"NONE", "CRON", "FIX_RATE"} {
		o.ScheduleTypes = append(o.ScheduleTypes, option{v, p.T("stype_" + v)})
	}
	for _, v := range []string{"DO_NOTHING", "FIRE_ONCE_NOW"} {
		o.Misfires = append(o.Misfires, option{v, p.T("misfire_" + v)})
	}
	for _, v := range route.Names() {
		o.Routes = append(o.Routes, option{v, route.Title(v, string(p.lang))})
	}
	for _, v := range []string{"SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"} {
		o.Blocks = append(o.Blocks, option{v, p.T("block_" + v)})
	}
	for _, v := range u.Manage.GlueTypes() {
		o.GlueTypes = append(o.GlueTypes, option{v, u.glueLabel(v)})
	}
	return o
}

func optionMap(os []option) map[string]string {
	m := make(map[string]string, len(os))
	for _, o := range os {
		m[o.Value] = o.Label
	}
	return m
}

func (u *UI) jobs(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	groups, err := u.Manage.VisibleGroups(c.UserContext(), pr)
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newListPage(c, "jobs", "jobs_title", &jobsList)
	p.Scripts = append([]string{"cronbuilder.js"}, p.Scripts...)
	opts := u.jobOptions(p)
	selected := queryInt(c, "jobGroup", 0)
	if !pr.CanGroup(selected) && selected > 0 {
		selected = 0
	}
	layout := u.Manage.Layout()
	paramMax := 2048
	if layout.Name == schema.Layout24 {
		paramMax = 512
	}
	starters := map[string]string{}
	for _, o := range opts.GlueTypes {
		if src, ok := glueStarters[o.Value]; ok {
			starters[o.Value] = src
		}
	}
	p.Boot["groups"] = groupRefs(groups)
	p.Boot["group"] = selected
	p.Boot["labels"] = map[string]any{
		"stype": optionMap(opts.ScheduleTypes), "misfire": optionMap(opts.Misfires), "route": optionMap(opts.Routes),
		"block": optionMap(opts.Blocks), "glue": optionMap(opts.GlueTypes),
	}
	p.Boot["starters"] = starters
	p.Data = struct {
		jobOptions
		Groups    []groupRef
		Selected  int
		ParamMax  int
		AdminZone string
		Zones     []string
		Calendars []schema.Calendar
	}{opts, groupRefs(groups), selected, paramMax, zoneLabel(u.Manage.Location()), u.Manage.Zones(), u.jobCalendars(c)}
	return u.render(c, fiber.StatusOK, p)
}

// glueVersion is one entry of the GLUE editor's version list.
type glueVersion struct {
	Label  string `json:"label"`
	Source string `json:"source"`
}

func (u *UI) glue(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	id := queryInt(c, "jobId", 0)
	job, err := u.Store.LoadJob(c.UserContext(), id)
	if err != nil {
		return u.errorPage(c, err)
	}
	if !pr.CanGroup(job.JobGroup) {
		return u.errorPage(c, errDenied)
	}
	p := u.newPage(c, "glue", "glue_title")
	p.Title = p.T("glue_title", job.ID)
	if job.GlueType == "BEAN" {
		p.Name = "error"
		p.Data = p.T("glue_bean", job.ID)
		p.Scripts = nil
		return u.render(c, fiber.StatusOK, p)
	}
	history, err := u.Manage.GlueHistory(c.UserContext(), pr, id)
	if err != nil {
		return u.errorPage(c, err)
	}
	if len(history) > 30 {
		history = history[:30]
	}
	loc := u.Manage.Location()
	versions := []glueVersion{{Label: p.T("glue_version_item", p.T("glue_current"), job.GlueRemark), Source: job.GlueSource}}
	for _, h := range history {
		versions = append(versions, glueVersion{
			Label:  p.T("glue_version_item", h.UpdateTime.In(loc).Format(manage.DateTimeLayout), h.GlueRemark),
			Source: h.GlueSource,
		})
	}
	p.Boot["jobId"] = job.ID
	p.Boot["glueType"] = job.GlueType
	p.Boot["versions"] = versions
	p.Scripts = append([]string{"editor.js"}, p.Scripts...)
	p.StyleNonce = newNonce()
	p.Boot["styleNonce"] = p.StyleNonce
	p.Boot["editable"] = pr.Admin()
	updated := ""
	if !job.GlueUpdatetime.IsZero() {
		updated = job.GlueUpdatetime.In(loc).Format(manage.DateTimeLayout)
	}
	p.Data = struct {
		Job      schema.Job
		Mode     string
		Versions []glueVersion
		Editable bool
		Updated  string
	}{job, u.glueLabel(job.GlueType), versions, pr.Admin(), updated}
	return u.render(c, fiber.StatusOK, p)
}

func (u *UI) logs(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	groups, err := u.Manage.VisibleGroups(c.UserContext(), pr)
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newListPage(c, "logs", "logs_title", &logsList)
	group, jobID := queryInt(c, "jobGroup", 0), queryInt(c, "jobId", 0)
	jobLabel := ""
	if jobID > 0 {
		job, err := u.Store.LoadJob(c.UserContext(), jobID)
		switch {
		case err == nil:
			if !pr.CanGroup(job.JobGroup) {
				return u.errorPage(c, errDenied)
			}
			group, jobLabel = job.JobGroup, jobRefLabel(job)
		case errors.Is(err, schema.ErrNotFound):
			jobID = 0
		default:
			return u.errorPage(c, err)
		}
	}
	if group > 0 && !pr.CanGroup(group) {
		group = 0
	}
	p.Boot["groups"] = groupRefs(groups)
	p.Boot["group"] = group
	p.Boot["rewordings"] = rewordings(p.lang)
	p.Boot["jobId"] = jobID
	p.Boot["jobLabel"] = jobLabel
	p.Data = struct {
		Groups   []groupRef
		Selected int
		JobID    int
		JobLabel string
		Rules    []option
	}{groupRefs(groups), group, jobID, jobLabel, clearRules(p)}
	return u.render(c, fiber.StatusOK, p)
}

// newNonce is a fresh CSP nonce: 128 random bits in hex (base64's alphabet is valid
// too, but its "+" and "/" are escaped in the page's JSON).
func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24+)
	return hex.EncodeToString(b)
}

// rewordings pair the fixed texts of stored trigger and result messages — the log
// texts and the routing strategies' titles, in every language — with l's, longest
// first, for the pages that show those messages (App.reword).
func rewordings(l i18n.Lang) [][2]string {
	out := i18n.Rewordings(l)
	for _, name := range route.Names() {
		want := route.Title(name, string(l))
		for _, other := range []i18n.Lang{i18n.ZhCN, i18n.ZhTC, i18n.En} {
			if from := route.Title(name, string(other)); from != want {
				out = append(out, [2]string{from, want})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i][0]) > len(out[j][0]) })
	return out
}

// jobRefLabel is how the log filter shows a job: "12 · nightly export".
func jobRefLabel(j schema.Job) string { return itoa64(int64(j.ID)) + " · " + j.JobDesc }

func clearRules(p *page) []option {
	out := make([]option, 0, 9)
	for i := 1; i <= 9; i++ {
		v := itoa64(int64(i))
		out = append(out, option{v, p.T("logs_clear_" + v)})
	}
	return out
}

func (u *UI) console(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	id := queryInt(c, "id", 0)
	l, err := u.Store.LoadLog(c.UserContext(), int64(id))
	if err != nil {
		return u.errorPage(c, err)
	}
	if !pr.CanGroup(l.JobGroup) {
		return u.errorPage(c, errDenied)
	}
	jobDesc := ""
	if job, err := u.Store.LoadJob(c.UserContext(), l.JobID); err == nil {
		jobDesc = job.JobDesc
	}
	p := u.newPage(c, "console", "logs_rolling")
	p.Title = p.T("console_title", l.ID)
	loc := u.Manage.Location()
	described := []schema.Log{l}
	u.Manage.DescribeWaiting(c.UserContext(), p.lang, described)
	l.TriggerMsg = described[0].TriggerMsg
	trig := ""
	if !l.TriggerTime.IsZero() {
		trig = l.TriggerTime.In(loc).Format(manage.DateTimeLayout)
	}
	p.Boot["logId"] = l.ID
	p.Boot["jobId"] = l.JobID
	p.Boot["triggerCode"] = l.TriggerCode
	p.Boot["handleCode"] = l.HandleCode
	p.Boot["triggerMsg"] = l.TriggerMsg
	p.Boot["rewordings"] = rewordings(p.lang)
	p.Boot["handleMsg"] = l.HandleMsg
	p.Data = struct {
		Log     schema.Log
		JobDesc string
		Trigger string
	}{l, jobDesc, trig}
	return u.render(c, fiber.StatusOK, p)
}

func (u *UI) groups(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	if !pr.Admin() {
		return u.errorPage(c, errAdminOnly)
	}
	p := u.newListPage(c, "groups", "groups_title", &groupsList)
	titleMax := 64
	if u.Manage.Layout().Name == schema.Layout24 {
		titleMax = 12
	}
	// AccessToken: the 3.5 form's per-group token field, and the app name fixed once
	// the group exists.
	p.Data = struct {
		TitleMax    int
		AccessToken bool
	}{titleMax, u.Manage.Layout().GroupAccessToken}
	return u.render(c, fiber.StatusOK, p)
}

func (u *UI) users(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	if !pr.Admin() {
		return u.errorPage(c, errAdminOnly)
	}
	groups, err := u.Manage.VisibleGroups(c.UserContext(), pr)
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newListPage(c, "users", "users_title", &usersList)
	p.Boot["groups"] = groupRefs(groups)
	p.Data = struct{ Groups []groupRef }{groupRefs(groups)}
	return u.render(c, fiber.StatusOK, p)
}

func (u *UI) help(c *fiber.Ctx) error {
	p := u.newPage(c, "help", "help_title")
	p.Data = struct{ AdminURL string }{c.BaseURL() + u.ctx}
	return u.render(c, fiber.StatusOK, p)
}
