package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/xxl-admin-go/xxl-admin-go/cmd/internal/adminapp"
	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func openDB(ctx context.Context, cfg *config.Config, withDB bool) (*sql.DB, error) {
	if cfg.DataSource.Postgres != nil {
		return openPostgres(ctx, cfg) // schema init creates the database first (createPostgres)
	}
	my := cfg.DataSource.MySQL.Clone()
	if !withDB {
		my.DBName = ""
	}
	connector, err := mysql.NewConnector(my)
	if err != nil {
		return nil, fmt.Errorf("spring.datasource.url: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(cfg.DataSource.MaxOpen)
	db.SetMaxIdleConns(cfg.DataSource.MaxIdle)
	db.SetConnMaxLifetime(cfg.DataSource.MaxLifetime)
	db.SetConnMaxIdleTime(cfg.DataSource.IdleTimeout)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database %s at %s: %w%s", cfg.DataSource.DatabaseName(), my.Addr, err, connectHint(cfg, err))
	}
	return db, nil
}

// connectHint is what to do about a refused connection whose cause is a common first
// mistake: the database not created yet, or a password never given.
func connectHint(cfg *config.Config, err error) string {
	var my *mysql.MySQLError
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &my) && my.Number == 1049, errors.As(err, &pg) && pg.Code == "3D000": // no such database
		return fmt.Sprintf(" — the database %s does not exist: run `xxl-admin-go schema init` with the same settings, "+
			"which creates it and its tables (or create it yourself, then run `xxl-admin-go schema init`)", cfg.DataSource.DatabaseName())
	case errors.As(err, &my) && (my.Number == 1045 || my.Number == 1698), errors.As(err, &pg) && pg.Code == "28P01": // access denied
		if cfg.DefaultPasswordSent() {
			return fmt.Sprintf(" — no spring.datasource.password was given, so upstream's default %q was sent; set the database user's password",
				config.DefaultValue("spring.datasource.password"))
		}
	}
	return ""
}

// schemaInit runs `schema init` on the configured database: MySQL or PostgreSQL
// (creating the database first), or the embedded file.
func schemaInit(ctx context.Context, cfg *config.Config, out io.Writer) error {
	layout := schema.LayoutName(cfg.Raw["layout"])
	if layout == "" {
		layout = schema.Layout34
	}
	if _, err := schema.DDL(layout); err != nil {
		return err
	}
	if err := checkPostgresLayout(cfg, layout); err != nil {
		return err
	}
	if embedded(cfg) {
		if layout != schema.Layout34 {
			return fmt.Errorf("the embedded file has the %s layout only, not %q", schema.Layout34, layout)
		}
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		db, err := openDatabase(ctx, cfg, quiet, openExclusive) // creates a missing or empty file
		if err != nil {
			return err
		}
		defer db.Close()
		if !db.Created {
			return fmt.Errorf("embedded database %s: %w", db.Name, schema.ErrNotEmpty)
		}
		fmt.Fprintf(out, "created the %s layout with seed rows in the embedded database %s (login %s / %s)\n", layout, db.Name, seedUser, seedPassword)
		return nil
	}
	name := cfg.DataSource.DatabaseName()
	if cfg.DataSource.Postgres != nil {
		if err := createPostgres(ctx, cfg, out); err != nil {
			return err
		}
	} else {
		srv, err := openDB(ctx, cfg, false)
		if err != nil {
			return err
		}
		_, err = srv.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(name, "`", "``")+"` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
		srv.Close()
		if err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	db, err := openDB(ctx, cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := schema.Init(ctx, db, layout); err != nil {
		return err
	}
	fmt.Fprintf(out, "created the %s layout with seed rows in database %s (login %s / %s)\n", layout, name, seedUser, seedPassword)
	return nil
}

// schemaCheck runs `schema check` on the configured database, the embedded file
// included (which must exist: check creates nothing).
func schemaCheck(ctx context.Context, cfg *config.Config, out io.Writer) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := openDatabase(ctx, cfg, quiet, openShared)
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := schema.Check(ctx, db.DB)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "database %s:\n%s", db.Name, r.String())
	if !r.OK() {
		return errors.New("the database cannot run the admin as it is")
	}
	return nil
}

// driverLog sends go-sql-driver's own messages (one per broken connection) to debug
// level, so an outage shows as the loops' single "database unavailable" line.
type driverLog struct{ log *slog.Logger }

func (d driverLog) Print(v ...any) {
	d.log.Debug("mysql driver", "msg", strings.TrimSpace(fmt.Sprint(v...)))
}

func serve(ctx context.Context, cfg *config.Config, log *slog.Logger, ready chan<- string) error {
	started := time.Now()
	_ = mysql.SetLogger(driverLog{log})
	// The port first: a port in use stops the start before the database is opened, and
	// before an embedded file and its lock are created.
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	served := false
	defer func() {
		if !served {
			ln.Close()
		}
	}()
	db, err := openDatabase(ctx, cfg, log, openExclusive) // embedded.go: MySQL, or the embedded file
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := adminapp.Build(ctx, adminapp.Options{Config: cfg, DB: db.DB, Location: db.Loc, Logger: log, Listener: ln,
		Pause: crashPoint(os.Getenv("XXL_TEST_CRASH_POINT"), os.Stderr)})
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		return err
	}
	served = true
	log.Info("xxl-admin-go serving", "addr", a.Addr().String(), "context_path", cfg.ContextPath,
		"layout", a.Layout.Name, "database", db.Name, "zone", db.Loc.String(),
		"startup", time.Since(started).Round(time.Millisecond).String())
	if m := a.ManagementAddr(); m != nil {
		log.Info("/metrics and /actuator/health served on the management port only", "addr", m.String())
	}
	db.announce(ctx, log, cfg, a.Store, a.Addr())
	schema.WarnMissingScanIndex(ctx, db.DB, log, schema.ScanIndexWarnJobs)
	if ready != nil {
		ready <- a.Addr().String()
	}
	return a.Wait(ctx)
}

// listen opens server.address:server.port. A port in use says so and how to choose
// another.
func listen(cfg *config.Config) (net.Listener, error) {
	addr := net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("server.port %d is in use (listening on %s): stop the program using it, or choose another port with --server.port=PORT", cfg.Port, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("server.address/server.port %s: %w", addr, err)
	}
	return ln, nil
}
