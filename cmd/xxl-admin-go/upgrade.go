package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// upgradeCommand runs `schema upgrade`: it adds this admin's missing indexes and
// tables (schema.OwnIndexes, schema.OwnTables) to the configured database, MySQL or an
// existing embedded file, and prints what it did. Rows and upstream's columns are left
// alone, so Java admins on the same database are unaffected; a second run is a no-op.
func upgradeCommand(ctx context.Context, cfg *config.Config, out io.Writer) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Shared: an embedded file must exist already, and a running admin may keep it
	// (SQLite serialises the DDL with its writes).
	db, err := openDatabase(ctx, cfg, quiet, openShared)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := schema.Upgrade(ctx, db.DB)
	if err != nil {
		if res.Changed() {
			fmt.Fprintf(out, "database %s, before the error:\n%s", db.Name, res)
		}
		return fmt.Errorf("schema upgrade of %s: %w", db.Name, err)
	}
	fmt.Fprintf(out, "database %s:\n%s", db.Name, res)
	return nil
}
