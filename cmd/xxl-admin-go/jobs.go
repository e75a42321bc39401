package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/jobspec"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// applyActor is who `jobs apply` is in the audit log.
const applyActor = "cli:jobs-apply"

// jobsExport runs `jobs export`: the selected jobs as YAML or JSON, to standard
// output or --out FILE.
func jobsExport(ctx context.Context, cfg *config.Config, out io.Writer) error {
	format := jobspec.Format(strings.ToLower(cfg.Raw["format"]))
	if format == "" {
		format = jobspec.YAML
		if strings.HasSuffix(strings.ToLower(cfg.Raw["out"]), ".json") {
			format = jobspec.JSON
		}
	}
	if format != jobspec.YAML && format != jobspec.JSON {
		return usageError{fmt.Sprintf("jobs export: --format is yaml or json, not %q", format)}
	}
	st, _, closeDB, err := openJobsStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	f, err := jobspec.Export(ctx, st, jobspec.Selection{Apps: list(cfg.Raw["apps"]), Tags: list(cfg.Raw["tags"])})
	if err != nil {
		return fmt.Errorf("jobs export: %w", err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf, format); err != nil {
		return err
	}
	path := cfg.Raw["out"]
	if path == "" || path == "-" {
		_, err := out.Write(buf.Bytes())
		return err
	}
	// GLUE sources may hold secrets: readable by the owner only, as schema export.
	if err := writePrivate(path, buf.Bytes()); err != nil {
		return fmt.Errorf("jobs export: %w", err)
	}
	n := 0
	for _, g := range f.Groups {
		n += len(g.Jobs)
	}
	fmt.Fprintf(out, "exported %d job(s) of %d executor group(s), %d calendar(s) and %d workflow(s) to %s\n",
		n, len(f.Groups), len(f.Calendars), len(f.Workflows), path)
	return nil
}

// jobsApply runs `jobs apply -f FILE [--dry-run] [--prune]`. The console's refusals
// and warning speak the language of the user's locale (LC_ALL, LC_MESSAGES, LANG),
// not the admin's configured one: the person reading them runs the command.
func jobsApply(ctx context.Context, cfg *config.Config, out io.Writer) error {
	path := cfg.Raw["file"]
	if path == "" {
		return usageError{"jobs apply needs -f FILE (- for standard input)"}
	}
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return fmt.Errorf("jobs apply: %w", err)
	}
	f, err := jobspec.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, loc, closeDB, err := openJobsStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	t := jobspec.NewTarget(st, loc, jobspec.LocaleLang(os.Getenv), applyActor, quiet)
	plan, err := jobspec.Apply(ctx, t, f, jobspec.Options{DryRun: switchOn(cfg, "dryrun"), Prune: switchOn(cfg, "prune")})
	var errs jobspec.Errors
	if errors.As(err, &errs) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err != nil {
		return fmt.Errorf("jobs apply: %w", err)
	}
	plan.Write(out)
	return nil
}

// openJobsStore opens the configured database as every command does, beside a
// running admin if there is one.
func openJobsStore(ctx context.Context, cfg *config.Config) (*schema.Store, *time.Location, func(), error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := openDatabase(ctx, cfg, quiet, openShared)
	if err != nil {
		return nil, nil, nil, err
	}
	st, _, err := schema.OpenStore(ctx, db.DB)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return st, db.Loc, func() { db.Close() }, nil
}

// list splits a comma-separated option value.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// switchOn reads a switch option (switchOptions): given without a value, or =true.
func switchOn(cfg *config.Config, name string) bool {
	v, ok := cfg.Raw[name]
	return ok && (v == "" || strings.EqualFold(v, "true"))
}
