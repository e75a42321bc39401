package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
)

// The command line: the one list of commands, their help, and how an argument list
// becomes a command. Options are Spring Boot's (--key=value, the keys of the Java
// admin, read by compat/config); the few of our own (--layout, --out, --in) belong to
// the commands that list them, and anything else that looks like an option is refused
// before the admin touches a database or a port.

// command is one thing xxl-admin-go does.
type command struct {
	name    string // as typed: "serve", "schema init"
	args    string // what follows the name in the synopsis
	summary string // one line for the list of commands
	help    string // the text of `xxl-admin-go NAME --help` after the synopsis
	// options are the own options it takes (squashed names of ownOptions).
	options []string
	// database: the command works on the configured database (datasourceHelp).
	database bool
	run      func(ctx context.Context, inv *invocation) error
}

// invocation is what a command runs with.
type invocation struct {
	cfg    *config.Config
	log    *slog.Logger
	stdout io.Writer
	ready  chan<- string
}

// commands lists every command; usage, per-command help and dispatch read it.
var commands = []*command{
	{
		name: "serve", args: "[--key=value ...]", database: true,
		summary: "run the admin: console, executor API and scheduler (the default command)",
		help: `Runs the admin on the configured database and prints the console's address and,
while the seed password is unchanged, the login (admin / 123456). SIGINT or SIGTERM
stops it: it fires what it has read ahead and exits within 10 s.`,
		run: func(ctx context.Context, inv *invocation) error { return serve(ctx, inv.cfg, inv.log, inv.ready) },
	},
	{
		name: "schema init", args: "[--layout=3.4|3.5|2.4] [--key=value ...]", database: true, options: []string{"layout"},
		summary: "create the tables and seed rows (login admin / 123456) on an empty database",
		help: `Creates the database when missing (on PostgreSQL from the maintenance database
"postgres", and the currentSchema), then the tables and seed rows of upstream's 3.4.x
layout, 3.5.x with --layout=3.5 (MySQL and PostgreSQL: each executor group then has
its own access token, set in the console's executor form) or 2.4.x with --layout=2.4
(MySQL only), with this admin's indexes and xxl_admin_* tables. The embedded file is
created with the 3.4 layout. A database that
already has xxl_job_* tables is refused unchanged.`,
		run: func(ctx context.Context, inv *invocation) error { return schemaInit(ctx, inv.cfg, inv.stdout) },
	},
	{
		name: "schema check", args: "[--key=value ...]", database: true,
		summary: "report the database's layout (2.4, 3.4, 3.5) and what is missing; changes nothing",
		help: `Reports the layout of the database's xxl_job_* tables and anything missing. This
admin's own indexes and xxl_admin_* tables are advice (schema upgrade adds them), not
errors. Exits with status 1 when the admin could not run on the database as it is.`,
		run: func(ctx context.Context, inv *invocation) error { return schemaCheck(ctx, inv.cfg, inv.stdout) },
	},
	{
		name: "schema upgrade", args: "[--key=value ...]", database: true,
		summary: "add this admin's missing indexes and xxl_admin_* tables; rows stay as they are",
		help: `Adds the indexes and xxl_admin_* tables that schema init creates and the database
lacks (one made by upstream's script, or by an older version), and prints each. Rows
and upstream's columns are left alone, so Java admins on the database are unaffected;
a second run says there is nothing to do. The embedded file must exist already.`,
		run: func(ctx context.Context, inv *invocation) error { return upgradeCommand(ctx, inv.cfg, inv.stdout) },
	},
	{
		name: "schema export", args: "--out FILE [--key=value ...]", database: true, options: []string{"out"},
		summary: "write the executor groups, jobs (with GLUE history) and users as JSON",
		help: `Writes the executor groups, jobs (with their GLUE source and history) and users as
JSON to FILE ("-" for standard output); logs and registry rows stay behind. The file
holds password hashes and is created readable by its owner only. It may run beside an
admin on the same database or embedded file.`,
		run: func(ctx context.Context, inv *invocation) error {
			return transferCommand(ctx, inv.cfg, "export", inv.stdout)
		},
	},
	{
		name: "schema import", args: "--in FILE [--key=value ...]", database: true, options: []string{"in"},
		summary: "load such a file into a fresh database, ids preserved",
		help: `Writes a file of schema export into a fresh database (nothing but the seed rows of
schema init, or an embedded file, created when missing), ids preserved, in one
transaction. A database with more than the seed rows is refused unchanged. Stop the
admin the file came from first, or both fire the jobs.`,
		run: func(ctx context.Context, inv *invocation) error {
			return transferCommand(ctx, inv.cfg, "import", inv.stdout)
		},
	},
	{
		name: "jobs export", args: "[--apps=APP,...] [--tags=TAG,...] [--format=yaml|json] [--out FILE] [--key=value ...]",
		database: true, options: []string{"apps", "tags", "format", "out"},
		summary: "write jobs as code: the selected groups' jobs, their calendars and workflows as YAML or JSON",
		help: `Writes the jobs of the executor groups named by --apps (all groups without it), or
only those with one of --tags, as a file for jobs apply: each job with its GLUE
source, time zone, calendars (by name), tags, retry back-off, child jobs (by group
app name and job name) and running state; the exclusion calendars the jobs name and
the workflows whose jobs are all exported (every calendar and workflow without
--apps and --tags). Standard output, or --out FILE (readable by
its owner only); JSON with --format=json or a FILE ending in .json.
docs/JOBS-AS-CODE.md describes the file.`,
		run: func(ctx context.Context, inv *invocation) error { return jobsExport(ctx, inv.cfg, inv.stdout) },
	},
	{
		name: "jobs apply", args: "-f FILE [--dry-run] [--prune] [--key=value ...]",
		database: true, options: []string{"file", "dryrun", "prune"},
		summary: "make the database hold the calendars, jobs and workflows of a file; --dry-run prints the plan only",
		help: `Reads a file of jobs export (YAML or JSON) and makes the database hold its
calendars, jobs and workflows: calendars and workflows are matched by name, jobs by
group app name and job name, created or changed through the console's rules, in
that order, and missing groups created. It prints the plan, one line a calendar,
group, job or workflow: create, change (with the fields), unchanged, delete. A second
apply of the same file changes nothing. --dry-run checks everything and rolls it
back. --prune deletes the jobs of the file's groups that the file does not hold, and
the calendars and workflows of their scope (docs/JOBS-AS-CODE.md), refusing what
would leave a reference dangling. A file with errors is refused as a whole, each
error named by the line of its key, the console's messages in the language of
LC_ALL, LC_MESSAGES or LANG. Changes are in the audit log as cli:jobs-apply. It may
run beside an admin on the same database.`,
		run: func(ctx context.Context, inv *invocation) error { return jobsApply(ctx, inv.cfg, inv.stdout) },
	},
	{
		// version and help are answered by parseCommandLine, before any configuration
		// is read.
		name: "version", summary: "print the version, the commit and the Go version",
		help: `Also: xxl-admin-go --version.`,
	},
	{
		name: "help", args: "[COMMAND]", summary: "print this text, or a command's (also: --help, -h)",
	},
}

// datasourceHelp ends the help of every command that works on a database: all of them
// resolve it the same way (openDatabase).
const datasourceHelp = `The database: spring.datasource.url (an argument, SPRING_DATASOURCE_URL, or
application.properties) names MySQL, MariaDB or PostgreSQL, with
spring.datasource.username and .password; without it, the embedded SQLite file
--xxl.admin.embedded.path (default ./xxl-job.db).`

// ownOptionHelp describes the own options, by squashed name.
var ownOptionHelp = map[string]string{
	"layout": "--layout=3.4|3.5|2.4  the upstream layout to create (default 3.4; 3.5 on MySQL and PostgreSQL; 2.4 on MySQL only)",
	"out":    "--out FILE        the file to write, - for standard output",
	"in":     "--in FILE         the file of schema export to read",
	"apps":   "--apps=APP,...    the executor groups' app names (default: all groups)",
	"tags":   "--tags=TAG,...    only the jobs with one of these tags",
	"format": "--format=yaml|json  the file's format (default yaml; json for a FILE ending .json)",
	"file":   "-f, --file FILE   the jobs file to apply, YAML or JSON (- for standard input)",
	"dryrun": "--dry-run         print the plan and change nothing",
	"prune":  "--prune           delete the jobs (calendars, workflows) of the file's scope that the file does not hold",
}

// mainKeys are the keys the general help names; docs/CONFIGURATION.md has them all.
var mainKeys = []struct{ key, what string }{
	{"server.port", "HTTP port"},
	{"server.servlet.context-path", "prefix of every URL"},
	{"spring.datasource.url", "jdbc:mysql://HOST:3306/xxl_job?serverTimezone=… or jdbc:postgresql://…; unset: the embedded file"},
	{"spring.datasource.username", "database login (and spring.datasource.password)"},
	{"xxl.admin.embedded.path", "the embedded SQLite file, default ./xxl-job.db"},
	{"xxl.job.accessToken", "the token executors send; set it on both sides"},
	{"xxl.job.i18n", "zh_CN, zh_TC or en"},
}

// usageText is `xxl-admin-go --help`.
func usageText() string {
	var b strings.Builder
	b.WriteString(`xxl-admin-go: the XXL-JOB scheduling center (xxl-job-admin) in Go, on the Java
admin's database, executor protocol and configuration keys.

Usage:
  xxl-admin-go [COMMAND] [--key=value ...] [--config FILE]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-15s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Configuration: the Java admin's keys, from --key=value arguments (and PARAMS, as the
official image takes them) over environment variables in Spring's form
(SERVER_PORT, SPRING_DATASOURCE_URL) over application.properties (--config FILE, or
./application.properties). An argument naming no key is refused. The main keys, with
their defaults:
`)
	for _, k := range mainKeys {
		def := config.DefaultValue(k.key)
		if k.key == "spring.datasource.url" || k.key == "xxl.admin.embedded.path" {
			def = ""
		}
		if def != "" {
			def = "=" + def
		}
		fmt.Fprintf(&b, "  --%s%s\n      %s\n", k.key, def, k.what)
	}
	b.WriteString(`
Every key: docs/CONFIGURATION.md. A command's own help: xxl-admin-go help COMMAND
(or COMMAND --help).
`)
	return b.String()
}

// commandHelp is `xxl-admin-go NAME --help`.
func commandHelp(c *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s.\n\n%s\n", strings.TrimSpace("xxl-admin-go "+c.name+" "+c.args), strings.ToUpper(c.summary[:1])+c.summary[1:], c.help)
	if len(c.options) > 0 {
		b.WriteString("\nOptions:\n")
		for _, o := range c.options {
			fmt.Fprintf(&b, "  %s\n", ownOptionHelp[o])
		}
	}
	if c.database {
		fmt.Fprintf(&b, "\n%s\n\nOther keys: xxl-admin-go --help, and docs/CONFIGURATION.md.\n", datasourceHelp)
	}
	return b.String()
}

// groupHelp is the help of a word that starts several commands ("schema").
func groupHelp(word string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: xxl-admin-go %s COMMAND [--key=value ...]\n\nCommands:\n", word)
	for _, c := range commands {
		if strings.HasPrefix(c.name, word+" ") {
			fmt.Fprintf(&b, "  %-15s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(&b, "\n%s\n\nA command's own help: xxl-admin-go help %s COMMAND.\n", datasourceHelp, word)
	return b.String()
}

// usageError is a command line that names no command or an option nobody takes.
// main exits with status 2 on it, as flag does.
type usageError struct{ msg string }

func (e usageError) Error() string {
	return e.msg + " (xxl-admin-go --help lists the commands and options)"
}

// commandLine is what parseCommandLine found.
type commandLine struct {
	cmd     *command
	help    string // non-empty: print it and do nothing else
	version bool
	rest    []string          // the arguments for the configuration (Spring keys)
	own     map[string]string // own options by squashed name
}

// spaced reports an option whose value may follow as the next argument: the command
// options and the configuration's --config FILE.
func spaced(name string) bool { k := squash(name); return commandFlags[k] || k == "config" }

// parseCommandLine finds the command, help and version requests and own options. It
// reads no file, environment or database: --help and --version do nothing else.
func parseCommandLine(args []string) (*commandLine, error) {
	args = shortOptions(args)
	var words []string
	help, version := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			words = append(words, args[i+1:]...)
			i = len(args)
		case a == "-h" || a == "-help" || a == "--help":
			help = true
		case a == "--version" || a == "-version":
			version = true
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			if !hasValue && spaced(name) {
				i++ // its value
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, usageError{fmt.Sprintf("unknown option %q: options are written --key=value", a)}
		default:
			words = append(words, a)
		}
	}
	if version || (len(words) > 0 && words[0] == "version" && !help) {
		return &commandLine{version: true}, nil
	}
	if len(words) > 0 && words[0] == "help" {
		help, words = true, words[1:]
	}
	cmd, n := findCommand(words)
	if help {
		switch {
		case len(words) == 0:
			return &commandLine{help: usageText()}, nil
		case cmd != nil && n == len(words):
			if cmd.name == "help" {
				return &commandLine{help: usageText()}, nil
			}
			return &commandLine{help: commandHelp(cmd)}, nil
		case isGroup(words[0]) && len(words) == 1:
			return &commandLine{help: groupHelp(words[0])}, nil
		}
		return nil, usageError{fmt.Sprintf("no help for %q: unknown command", strings.Join(words, " "))}
	}
	switch {
	case len(words) == 0:
		cmd = commands[0] // serve
	case cmd == nil && isGroup(words[0]) && len(words) == 1:
		return nil, usageError{fmt.Sprintf("%s needs a command: %s", words[0], strings.Join(groupCommands(words[0]), ", "))}
	case cmd == nil:
		return nil, usageError{fmt.Sprintf("unknown command %q", strings.Join(words, " "))}
	case n < len(words):
		return nil, usageError{fmt.Sprintf("%s: unexpected argument %q", cmd.name, words[n])}
	}
	rest, own := cutOptions(args, ownOptions, commandFlags)
	for k := range own {
		if k != squash(embeddedPathKey) && !takes(cmd, k) {
			return nil, usageError{fmt.Sprintf("%s: unknown option --%s", cmd.name, k)}
		}
	}
	for _, k := range cmd.options {
		if v, ok := own[k]; ok && v == "" && !switchOptions[k] {
			return nil, usageError{fmt.Sprintf("%s: --%s needs a value", cmd.name, k)}
		}
	}
	// The words stay: the configuration takes them as positional arguments and
	// ignores them.
	return &commandLine{cmd: cmd, rest: rest, own: own}, nil
}

// shortOptions spells -f FILE (kubectl's) as --file FILE.
func shortOptions(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		switch {
		case a == "-f":
			a = "--file"
		case strings.HasPrefix(a, "-f="):
			a = "--file=" + a[3:]
		}
		out = append(out, a)
	}
	return out
}

// findCommand matches the longest command name at the start of words.
func findCommand(words []string) (*command, int) {
	for n := min(2, len(words)); n > 0; n-- {
		name := strings.Join(words[:n], " ")
		for _, c := range commands {
			if c.name == name {
				return c, n
			}
		}
	}
	return nil, 0
}

// groupCommands are the second words of the commands that word starts ("schema").
func groupCommands(word string) []string {
	var names []string
	for _, c := range commands {
		if sub, ok := strings.CutPrefix(c.name, word+" "); ok {
			names = append(names, sub)
		}
	}
	return names
}

func isGroup(word string) bool { return len(groupCommands(word)) > 0 }

func takes(c *command, option string) bool {
	for _, o := range c.options {
		if o == option {
			return true
		}
	}
	return false
}

// Set at build time by release builds and the Dockerfile:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)"
//
// Unset, both come from the build information Go records (the module version of
// `go install …@v1.2.3`, the VCS revision of a build in a checkout).
var version, commit string

// versionText is `xxl-admin-go version`.
func versionText() string {
	v, c, modified := version, commit, false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					c = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true" && commit == ""
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	if modified {
		c += " (modified)"
	}
	return fmt.Sprintf("xxl-admin-go %s\ncommit %s\n%s %s/%s\n", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// errUsage reports whether err is a usage error: a command line parseCommandLine
// refused, or an argument naming no key of the configuration.
func errUsage(err error) bool {
	var u usageError
	var k *config.KeyError
	return errors.As(err, &u) || errors.As(err, &k) && strings.HasPrefix(k.Key, "--")
}
