package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Options of our own, taken out of the arguments before the Spring keys are parsed
// (squashed names, see squash): the embedded file, the layout of schema init, and the
// file of schema export and import; the command options may also take their value
// from the next argument (--out FILE). Which command takes which: commands (cli.go).
var (
	ownOptions = map[string]bool{squash(embeddedPathKey): true, "out": true, "in": true, "layout": true,
		"file": true, "apps": true, "tags": true, "format": true, "dryrun": true, "prune": true}
	commandFlags = map[string]bool{"out": true, "in": true, "layout": true, "file": true, "apps": true, "tags": true, "format": true}
	// switchOptions take no value (--dry-run); --dry-run=true works too.
	switchOptions = map[string]bool{"dryrun": true, "prune": true}
)

// applyOwnOptions records our own options in cfg.Raw (under embeddedPathKey and the
// squashed names of the command options).
func applyOwnOptions(cfg *config.Config, own map[string]string, environ []string) {
	arg, ok := own[squash(embeddedPathKey)]
	if !ok {
		// The official Docker image passes options in PARAMS; arguments win.
		for _, kv := range environ {
			if v, found := strings.CutPrefix(kv, "PARAMS="); found {
				_, fromParams := cutOptions(strings.Fields(v), ownOptions, nil)
				arg = fromParams[squash(embeddedPathKey)]
			}
		}
	}
	cfg.Raw[embeddedPathKey] = embeddedPath(cfg, arg, environ)
	for k := range ownOptions {
		if v, ok := own[k]; ok && k != squash(embeddedPathKey) {
			cfg.Raw[k] = v
		}
	}
}

// transferCommand runs `schema export --out FILE` and `schema import --in FILE` on the
// configured database: MySQL or PostgreSQL when spring.datasource.url is set, the
// embedded file otherwise.
func transferCommand(ctx context.Context, cfg *config.Config, verb string, out io.Writer) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if verb == "export" {
		path := cfg.Raw["out"]
		if path == "" {
			return errors.New("usage: xxl-admin-go schema export --out FILE (- for standard output)")
		}
		db, err := openDatabase(ctx, cfg, quiet, openShared)
		if err != nil {
			return err
		}
		defer db.Close()
		st, _, err := schema.OpenStore(ctx, db.DB)
		if err != nil {
			return err
		}
		d, err := schema.Export(ctx, st)
		if err != nil {
			return err
		}
		if path == "-" {
			return d.Write(out)
		}
		var buf strings.Builder
		if err := d.Write(&buf); err != nil {
			return err
		}
		// The file holds password hashes and group tokens: readable by its owner only,
		// also where a wider file existed.
		if err := writePrivate(path, []byte(buf.String())); err != nil {
			return fmt.Errorf("schema export: %w", err)
		}
		fmt.Fprintf(out, "exported %s from %s to %s\n", counts(len(d.Groups), len(d.Jobs), glueVersions(d), len(d.Users), len(d.Workflows)), db.Name, path)
		return nil
	}

	path := cfg.Raw["in"]
	if path == "" {
		return errors.New("usage: xxl-admin-go schema import --in FILE")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("schema import: %w", err)
	}
	d, err := schema.ReadDump(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	db, err := openDatabase(ctx, cfg, quiet, openExclusive)
	if err != nil {
		return err
	}
	defer db.Close()
	st, _, err := schema.OpenStore(ctx, db.DB)
	if err != nil {
		return err
	}
	res, err := schema.Import(ctx, st, d)
	if err != nil {
		return fmt.Errorf("schema import into %s: %w", db.Name, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(out, "warning:", w)
	}
	fmt.Fprintf(out, "imported %s from %s into %s, ids preserved\n", counts(res.Groups, res.Jobs, res.GlueVersions, res.Users, res.Workflows), path, db.Name)
	return nil
}

func glueVersions(d *schema.Dump) int {
	n := 0
	for _, j := range d.Jobs {
		n += len(j.GlueHistory)
	}
	return n
}

func counts(groups, jobs, glue, users, workflows int) string {
	s := fmt.Sprintf("%d executor group(s), %d job(s) with %d GLUE version(s), %d user(s)", groups, jobs, glue, users)
	if workflows > 0 {
		s += fmt.Sprintf(", %d workflow(s)", workflows)
	}
	return s
}
