package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/cmd/internal/adminapp"
	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// loadConfig reads the configuration, keeping our own `--layout` flag of `schema init`
// out of the Spring keys.
func loadConfig(args, environ []string) (*config.Config, error) {
	var rest []string
	layout := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--layout="); ok {
			layout = v
			continue
		}
		rest = append(rest, a)
	}
	cfg, err := config.Load(rest, environ)
	if err != nil {
		return nil, err
	}
	if layout != "" {
		cfg.Raw["layout"] = layout
	}
	return cfg, nil
}

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
		return nil, fmt.Errorf("connect to database %s at %s: %w", my.DBName, my.Addr, err)
	}
	return db, nil
}

func schemaCommand(ctx context.Context, cfg *config.Config, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: xxl-admin-go schema init|check|upgrade|export|import")
	}
	switch args[0] {
	case "init":
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
		fmt.Fprintf(out, "created the %s layout with seed rows in database %s (login admin / 123456)\n", layout, name)
		return nil
	case "upgrade":
		return upgradeCommand(ctx, cfg, out) // upgrade.go
	case "export", "import":
		return transferCommand(ctx, cfg, args[0], out) // transfer.go
	case "check":
		db, err := openDB(ctx, cfg, true)
		if err != nil {
			return err
		}
		defer db.Close()
		r, err := schema.Check(ctx, db)
		if err != nil {
			return err
		}
		fmt.Fprint(out, r.String())
		if !r.OK() {
			return errors.New("the database cannot run the admin as it is")
		}
		return nil
	}
	return fmt.Errorf("unknown schema command %q (want init, check, upgrade, export or import)", args[0])
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
	db, err := openDatabase(ctx, cfg, log, openExclusive) // embedded.go: MySQL, or the embedded file
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := adminapp.Build(ctx, adminapp.Options{Config: cfg, DB: db.DB, Location: db.Loc, Logger: log,
		Pause: crashPoint(os.Getenv("XXL_TEST_CRASH_POINT"), os.Stderr)})
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		return err
	}
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

// crashPoint is the fault-injection hook of the process tests (crash_test.go):
// XXL_TEST_CRASH_POINT=scan|ring makes the admin, once it has run 8 s, announce the
// first time it reaches that point on w and hang there for a minute, so the test can
// kill it exactly there. Unset (always, outside those tests) it is nil.
func crashPoint(point string, w io.Writer) func(string) {
	if point == "" {
		return nil
	}
	start := time.Now()
	var once sync.Once
	return func(at string) {
		if at != point || time.Since(start) < 8*time.Second {
			return
		}
		once.Do(func() {
			fmt.Fprintln(w, "XXL_TEST_CRASH_POINT reached: "+at)
			time.Sleep(time.Minute)
		})
	}
}
