package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// openPostgres opens the pool of a jdbc:postgresql: datasource and checks that the
// server answers.
func openPostgres(ctx context.Context, cfg *config.Config) (*sql.DB, error) {
	pg := cfg.DataSource.Postgres
	db, err := cfg.DataSource.Open()
	if err != nil {
		return nil, fmt.Errorf("spring.datasource.url: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database %s at %s:%d: %w%s", pg.Database, pg.Conn.Host, pg.Conn.Port, err, connectHint(cfg, err))
	}
	return db, nil
}

// createPostgres creates the database and the currentSchema of a jdbc:postgresql:
// datasource when they do not exist, as `schema init` does for MySQL. The database is
// created from the maintenance database postgres, which needs the CREATEDB privilege;
// an existing database needs neither.
func createPostgres(ctx context.Context, cfg *config.Config, out io.Writer) error {
	pg := cfg.DataSource.Postgres
	connect := func(database string) (*pgx.Conn, error) {
		c := pg.Conn.Copy()
		c.Database = database
		delete(c.RuntimeParams, "search_path")
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return pgx.ConnectConfig(cctx, c)
	}
	conn, err := connect(pg.Database)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "3D000" { // invalid_catalog_name: no such database
		admin, aerr := connect("postgres")
		if aerr != nil {
			return fmt.Errorf("create database %s: connect to the maintenance database postgres: %w", pg.Database, aerr)
		}
		_, aerr = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{pg.Database}.Sanitize()+" ENCODING 'UTF8' TEMPLATE template0")
		_ = admin.Close(ctx)
		if aerr != nil {
			return fmt.Errorf("create database %s: %w", pg.Database, aerr)
		}
		fmt.Fprintf(out, "created database %s\n", pg.Database)
		conn, err = connect(pg.Database)
	}
	if err != nil {
		return fmt.Errorf("connect to database %s at %s:%d: %w", pg.Database, pg.Conn.Host, pg.Conn.Port, err)
	}
	defer conn.Close(ctx)
	if pg.Schema == "" {
		return nil
	}
	// currentSchema may list several schemas; the tables go into the first.
	first := strings.TrimSpace(strings.Split(pg.Schema, ",")[0])
	if first == "" || first == "$user" {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{first}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", first, err)
	}
	return nil
}

// checkPostgresLayout refuses layouts the PostgreSQL DDL does not have, before
// anything is created.
func checkPostgresLayout(cfg *config.Config, layout schema.LayoutName) error {
	if cfg.DataSource.Postgres != nil {
		return schema.CheckPostgresLayout(layout)
	}
	return nil
}
