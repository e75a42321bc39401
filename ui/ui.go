// Package ui is the console's web interface: server-rendered pages with small scripts
// and styles of our own, all embedded in the binary; lists page through the JSON
// endpoints of routes/console, so nothing here reads more than one page of rows.
package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Reader is the read access the pages need besides manage.Service: one job or log by
// id, for the GLUE editor and the live-output page. *schema.Store implements it.
type Reader interface {
	LoadJob(ctx context.Context, id int) (schema.Job, error)
	LoadLog(ctx context.Context, id int64) (schema.Log, error)
	LoadUserByName(ctx context.Context, username string) (schema.User, error)
}

// Deps is what the pages need.
type Deps struct {
	Manage *manage.Service
	Store  Reader
	// Lang is the configured language (xxl.job.i18n); a browser may choose another
	// with the language switch (cookie LangCookie).
	Lang i18n.Lang
	Log  *slog.Logger
	// WeakAccessToken is true when xxl.job.accessToken is empty or the public
	// "default_token": administrators then see a warning on every page.
	WeakAccessToken bool
	// AlarmChannels are the names of the configured alarm channels
	// (xxl.admin.alarm.webhook.<name>.*), offered in the job form as webhook:<name>.
	AlarmChannels []string
}

// LangCookie holds the language a browser chose ("zh_CN", "zh_TC" or "en"); the
// console's JSON answers speak it too.
const LangCookie = console.LangCookie

// UI is the mounted web interface.
type UI struct {
	Deps
	ctx       string // context path without trailing slash
	pages     map[string]*template.Template
	assets    map[string]asset
	assetBase string // ctx + "/assets/" + version
}

type asset struct {
	body  []byte
	ctype string
}

// New parses the embedded templates and assets for a console served under
// contextPath. Pass UI.LoginPage as console.Deps.LoginPage, call console.Mount, then
// UI.Mount.
func New(contextPath string, deps Deps) (*UI, error) {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	u := &UI{Deps: deps, ctx: strings.TrimSuffix(contextPath, "/"), pages: map[string]*template.Template{}, assets: map[string]asset{}}
	if err := u.loadAssets(); err != nil {
		return nil, err
	}
	if err := u.loadTemplates(); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *UI) loadAssets() error {
	h := sha256.New()
	var names []string
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("ui assets: %w", err)
	}
	sort.Strings(names)
	for _, p := range names {
		b, err := assetFS.ReadFile(p)
		if err != nil {
			return fmt.Errorf("ui asset %s: %w", p, err)
		}
		name := strings.TrimPrefix(p, "assets/")
		ct := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		u.assets[name] = asset{body: b, ctype: ct}
		h.Write([]byte(name))
		h.Write(b)
	}
	u.assetBase = u.ctx + "/assets/" + hex.EncodeToString(h.Sum(nil))[:12]
	return nil
}

// pageFiles are the templates rendered inside the layout.
var pageFiles = []string{"dashboard", "jobs", "glue", "logs", "console", "groups", "users", "tokens", "audit", "calendars", "workflows", "help", "error"}

func (u *UI) loadTemplates() error {
	base, err := template.ParseFS(templateFS, "templates/layout.html", "templates/list.html")
	if err != nil {
		return fmt.Errorf("ui templates: %w", err)
	}
	for _, name := range pageFiles {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("ui template %s: %w", name, err)
		}
		u.pages[name] = t
	}
	login, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/login.html")
	if err != nil {
		return fmt.Errorf("ui template login: %w", err)
	}
	u.pages["login"] = login
	return nil
}

// Mount registers the page handlers and the assets. Call it after console.Mount, which
// puts the session check in front of the page paths.
func (u *UI) Mount(app *fiber.App) {
	app.Get(u.ctx+"/assets/:version/*", u.serveAsset)
	home := u.ctx + "/"
	app.Get(home, u.dashboard)
	app.Get(u.ctx+"/dashboard", u.dashboard)
	app.Get(u.ctx+"/jobinfo", u.jobs)
	app.Get(u.ctx+"/jobcode", u.glue)
	app.Get(u.ctx+"/joblog", u.logs)
	app.Get(u.ctx+"/joblog/logDetailPage", u.console)
	app.Get(u.ctx+"/jobgroup", u.groups)
	app.Get(u.ctx+"/user", u.users)
	app.Get(u.ctx+"/apitoken", u.tokens)
	app.Get(u.ctx+"/audit", u.audit)
	app.Get(u.ctx+"/calendar", u.calendars)
	app.Get(u.ctx+"/workflow", u.workflows)
	app.Get(u.ctx+"/help", u.help)
}

func (u *UI) serveAsset(c *fiber.Ctx) error {
	a, ok := u.assets[c.Params("*")]
	if !ok {
		return c.Status(fiber.StatusNotFound).SendString("not found")
	}
	c.Set(fiber.HeaderContentType, a.ctype)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if u.ctx+"/assets/"+c.Params("version") == u.assetBase {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "no-cache")
	}
	return c.Send(a.body)
}

// contentSecurityPolicy allows only this admin's own scripts, styles and requests: no
// inline script or style runs, so text that slipped into the markup could not act.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// page is what every template renders from.
type page struct {
	u       *UI
	lang    i18n.Lang
	texts   map[string]string
	Name    string // template and script name
	Title   string
	User    string
	Admin   bool
	Boot    map[string]any
	Scripts []string
	Data    any
	// List is the list partial's configuration on list pages, nil elsewhere.
	List *listSpec
	// StyleNonce, when set, lets the page's scripts add <style> elements carrying it
	// (the GLUE editor styles itself so); scripts stay limited to the admin's own.
	StyleNonce string
	// Warnings are the security banner's lines (text keys), shown to administrators.
	Warnings []string

	// External is a user of an LDAP directory or OpenID Provider (no password change).
	External bool
}

// T returns a UI text with its {0}, {1}, … placeholders filled.
func (p *page) T(key string, args ...any) string {
	s, ok := p.texts[key]
	if !ok {
		s = key
	}
	for i, a := range args {
		s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", fmt.Sprint(a))
	}
	return s
}

// Asset is the URL of an embedded asset.
func (p *page) Asset(name string) string { return p.u.assetBase + "/" + name }

// URL is a path under the context path.
func (p *page) URL(rel string) string { return p.u.ctx + rel }

// Lang is the page's language code; HTMLLang its BCP 47 form.
func (p *page) Lang() string { return string(p.lang) }

// HTMLLang is the lang attribute of the page.
func (p *page) HTMLLang() string {
	switch p.lang {
	case i18n.En:
		return "en"
	case i18n.ZhTC:
		return "zh-Hant"
	}
	return "zh-CN"
}

// Languages lists the language switch's choices.
func (p *page) Languages() []option {
	return []option{{"zh_CN", "简体中文"}, {"zh_TC", "繁體中文"}, {"en", "English"}}
}

// Initial is the user's avatar letter.
func (p *page) Initial() string {
	for _, r := range p.User {
		return strings.ToUpper(string(r))
	}
	return "?"
}

// Num writes a count with thousands separators (1,234,567).
func (p *page) Num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// AlarmChannels are the job form's alarm channel entries, webhook:<name>.
func (p *page) AlarmChannels() []string {
	out := make([]string, 0, len(p.u.AlarmChannels))
	for _, n := range p.u.AlarmChannels {
		out = append(out, "webhook:"+n)
	}
	return out
}

// Nav reports whether a menu entry is the current page.
func (p *page) Nav(name string) bool { return p.Name == name }

type option struct{ Value, Label string }

// lang is the language of a request: the browser's choice, else the configured one.
func (u *UI) lang(c *fiber.Ctx) i18n.Lang {
	switch v := i18n.Lang(c.Cookies(LangCookie)); v {
	case i18n.ZhCN, i18n.ZhTC, i18n.En:
		return v
	}
	return i18n.Parse(string(u.Lang))
}

func (u *UI) newPage(c *fiber.Ctx, name, titleKey string) *page {
	l := u.lang(c)
	p := &page{u: u, lang: l, texts: textsFor(l), Name: name}
	p.Title = p.T(titleKey)
	if pr, ok := console.PrincipalOf(c); ok {
		p.User, p.Admin, p.External = pr.User.Username, pr.Admin(), pr.External()
	}
	if p.Admin {
		p.Warnings = u.securityWarnings(c.UserContext())
	}
	loc := u.Manage.Location()
	_, offset := time.Now().In(loc).Zone()
	p.Boot = map[string]any{
		"base": u.ctx, "lang": string(l), "i18n": p.texts, "user": p.User, "admin": p.Admin,
		"zone": zoneName(loc), "zoneOffset": offset / 60, "page": name,
	}
	if _, ok := u.assets[name+".js"]; ok {
		p.Scripts = append(p.Scripts, name+".js")
	}
	return p
}

// render writes a page with the security headers every page gets.
func (u *UI) render(c *fiber.Ctx, status int, p *page) error {
	t, ok := u.pages[p.Name]
	if !ok {
		return fmt.Errorf("ui: no template %q", p.Name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, p.Name, p); err != nil {
		u.Log.Error("page render failed", "page", p.Name, "err", err)
		return c.Status(fiber.StatusInternalServerError).SendString("page render failed")
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	csp := contentSecurityPolicy
	if p.StyleNonce != "" {
		csp = strings.Replace(csp, "style-src 'self'", "style-src 'self' 'nonce-"+p.StyleNonce+"'", 1)
	}
	c.Set(fiber.HeaderContentSecurityPolicy, csp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).Send(buf.Bytes())
}

// errorPage answers a page request that cannot be served — a denied or missing row,
// or a database problem (logged) — with the console's error page. A row that does not
// exist (an unknown or unreadable id in the URL) answers 404; the other refusals keep
// 200, as upstream's error pages.
func (u *UI) errorPage(c *fiber.Ctx, err error) error {
	p := u.newPage(c, "error", "common_error_title")
	msg := manage.MsgIn(p.lang, "console_db_error")
	status := fiber.StatusOK
	var me *manage.Error
	switch {
	case errors.As(err, &me):
		msg = me.In(p.lang)
		if me.Kind == manage.NotFound {
			status = fiber.StatusNotFound
		}
	case errors.Is(err, errAdminOnly):
		msg = p.T("common_admin_only")
	case errors.Is(err, schema.ErrNotFound):
		msg = p.T("common_not_found")
		status = fiber.StatusNotFound
	case errors.Is(err, errDenied):
		msg = p.T("common_denied")
	default:
		u.Log.Error("page failed", "path", c.Path(), "err", err)
	}
	p.Data = msg
	return u.render(c, status, p)
}

// Hashes of the seeded administrator password "123456": 2.x rows hold MD5, 3.2+ rows
// SHA-256 (schema.md §5); either may be found in any layout after a migration.
var defaultAdminHashes = map[string]bool{
	"e10adc3949ba59abbe56e057f20f883e":                                 true,
	"8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92": true,
}

// securityWarnings lists what leaves the admin open: the executor access token is
// empty or the public default, or the seeded "admin" account still has the seeded
// password. It is read on every page, so a changed password clears its line at once.
// Members never see it: the line would tell them the admin account is open.
func (u *UI) securityWarnings(ctx context.Context) []string {
	var out []string
	if u.WeakAccessToken {
		out = append(out, "banner_token")
	}
	if usr, err := u.Store.LoadUserByName(ctx, "admin"); err == nil && defaultAdminHashes[strings.ToLower(usr.Password)] {
		out = append(out, "banner_admin_pwd")
	} else if err != nil && !errors.Is(err, schema.ErrNotFound) {
		u.Log.Warn("security banner: reading the admin user failed", "err", err)
	}
	if u.Manage.JavaAdminWarning(ctx) != "" {
		out = append(out, "banner_java_admin")
	}
	return out
}

var (
	errAdminOnly = errors.New("administrators only")
	errDenied    = errors.New("no permission on the group")
)

// zoneName is the IANA name of the server's zone for the browser's date formatting, ""
// when it cannot be told (the browser then uses the fixed offset it is also given).
func zoneName(loc *time.Location) string {
	if n := loc.String(); n != "Local" && n != "" {
		return n
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil {
			return tz
		}
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			return name
		}
	}
	return ""
}

// zoneLabel names the server's zone for a reader: its IANA name (Etc/UTC, not the
// Local of a zone taken from the machine), else its abbreviation and offset now.
func zoneLabel(loc *time.Location) string {
	if n := zoneName(loc); n != "" {
		return n
	}
	return time.Now().In(loc).Format("MST -07:00")
}

// queryInt reads an integer query parameter, def when absent or unreadable.
func queryInt(c *fiber.Ctx, key string, def int) int {
	v := c.Query(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}
