package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The embedded database: with no spring.datasource.url configured anywhere, the admin
// runs on an SQLite file instead of the MySQL at the Java admin's default URL, so that
// a first start needs nothing installed.
const (
	// embeddedPathKey names the file; it is read from --key=value arguments, the
	// environment (XXL_ADMIN_EMBEDDED_PATH) and properties files, like Spring keys.
	embeddedPathKey = "xxl.admin.embedded.path"
	// defaultEmbeddedPath is relative to the working directory.
	defaultEmbeddedPath = "./xxl-job.db"
	// seedLogin is the login of a fresh database.
	seedUser, seedPassword = "admin", "123456"
)

// squash is a property name with case, dots, dashes and underscores dropped: how an
// argument, an environment variable and a properties key of the same setting compare.
func squash(key string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '_' || r == '.':
			return -1
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A')
		}
		return r
	}, key)
}

// cutOptions removes our own options from the arguments before the Spring keys are
// parsed: keys is the set of squashed option names; an option takes its value after
// '=' or, for the command flags, from the next argument. It returns the remaining
// arguments and the values found (the last one wins).
func cutOptions(args []string, keys map[string]bool, spaced map[string]bool) ([]string, map[string]string) {
	rest := make([]string, 0, len(args))
	found := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		k := squash(name)
		if !strings.HasPrefix(a, "--") || !keys[k] {
			rest = append(rest, a)
			continue
		}
		if !hasValue && spaced[k] && i+1 < len(args) {
			i++
			value = args[i]
		}
		found[k] = value
	}
	return rest, found
}

// embeddedPath is the embedded database file: --xxl.admin.embedded.path (argValue) >
// XXL_ADMIN_EMBEDDED_PATH > properties files > ./xxl-job.db. The configuration loader
// does not know the key, so its "unknown key" warnings for it are dropped here.
func embeddedPath(cfg *config.Config, argValue string, environ []string) string {
	want := squash(embeddedPathKey)
	var fromFile, fromEnv string
	for k, v := range cfg.Raw {
		if squash(k) == want {
			fromFile = v
		}
	}
	for _, kv := range environ {
		if name, v, ok := strings.Cut(kv, "="); ok && squash(name) == want {
			fromEnv = v
		}
	}
	kept := cfg.Warnings[:0]
	for _, w := range cfg.Warnings {
		head, _, _ := strings.Cut(strings.TrimPrefix(w, "env "), " ")
		if squash(strings.TrimSuffix(head, ":")) != want {
			kept = append(kept, w)
		}
	}
	cfg.Warnings = kept
	for _, v := range []string{argValue, fromEnv, fromFile} {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return defaultEmbeddedPath
}

// embedded reports whether the admin runs on the embedded file: nobody configured
// spring.datasource.url.
func embedded(cfg *config.Config) bool {
	return cfg.Source["spring.datasource.url"] == config.SourceDefault
}

// database is what the admin runs on: the configured MySQL, or the embedded file.
type database struct {
	DB *sql.DB
	// Loc is the zone DATETIME values are read in and cron is evaluated in:
	// serverTimezone for MySQL, the machine's zone for the embedded file.
	Loc *time.Location
	// Name is the MySQL database name or the embedded file's absolute path.
	Name     string
	Embedded bool
	// Created reports an embedded file created, with seed rows, by this start.
	Created bool
	unlock  func()
}

// Close closes the pool and releases the embedded file's lock.
func (d *database) Close() {
	d.DB.Close()
	if d.unlock != nil {
		d.unlock()
	}
}

// openMode says what a command does with the embedded file.
type openMode int

const (
	// openExclusive runs the admin (or an import): the file is created when missing
	// and locked against a second admin.
	openExclusive openMode = iota
	// openShared reads an existing file beside a running admin (export).
	openShared
)

// openDatabase opens the configured MySQL or PostgreSQL database, or the embedded file when no
// spring.datasource.url is configured.
func openDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, mode openMode) (*database, error) {
	if !embedded(cfg) {
		db, err := openDB(ctx, cfg, true)
		if err != nil {
			return nil, err
		}
		return &database{DB: db, Loc: cfg.DataSource.Location(), Name: cfg.DataSource.DatabaseName()}, nil
	}
	path, err := filepath.Abs(cfg.Raw[embeddedPathKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", embeddedPathKey, err)
	}
	d := &database{Loc: time.Local, Name: path, Embedded: true}
	_, statErr := os.Stat(path)
	switch {
	case mode == openShared && errors.Is(statErr, os.ErrNotExist):
		return nil, fmt.Errorf("no embedded database at %s (set %s, or spring.datasource.url for MySQL or PostgreSQL)", path, embeddedPathKey)
	case mode == openExclusive:
		if d.unlock, err = lockFile(path + ".lock"); err != nil {
			return nil, fmt.Errorf("embedded database %s: %w", path, err)
		}
	}
	d.DB, err = schema.OpenSQLite(path, d.Loc)
	if err != nil {
		d.unlockOnly()
		return nil, fmt.Errorf("%w (%s)", err, embeddedPathKey)
	}
	r, err := schema.Check(ctx, d.DB)
	if err == nil && r.Empty && mode == openExclusive {
		if err = schema.Init(ctx, d.DB, schema.Layout34); err == nil {
			d.Created = true
			log.Info("created the embedded database with seed rows", "file", path)
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("embedded database %s: %w", path, err)
	}
	return d, nil
}

func (d *database) unlockOnly() {
	if d.unlock != nil {
		d.unlock()
	}
}

// announce tells a newcomer, on every database, where the console is and, while the
// seed password is unchanged, how to log in.
func (d *database) announce(ctx context.Context, log *slog.Logger, cfg *config.Config, store *schema.Store, addr net.Addr) {
	host := "localhost"
	if cfg.Address != "" && cfg.Address != "0.0.0.0" && cfg.Address != "::" {
		host = cfg.Address
	}
	port := cfg.Port
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = tcp.Port
	}
	url := "http://" + net.JoinHostPort(host, fmt.Sprint(port)) + strings.TrimSuffix(cfg.ContextRoot(), "/") + "/"
	login := ""
	if u, err := store.LoadUserByName(ctx, seedUser); err == nil && manage.VerifyPassword(u.Password, seedPassword) {
		login = fmt.Sprintf(", login %s / %s", seedUser, seedPassword)
	}
	if !d.Embedded {
		log.Info("console at "+url+login, "database", d.Name)
		return
	}
	log.Info("console at "+url+login, "embedded_database", d.Name,
		"hint", "set spring.datasource.url to run on MySQL or PostgreSQL; `xxl-admin-go schema export` moves jobs, executors and users there")
}
