// Command xxl-admin-go is a drop-in replacement for the Java xxl-job-admin: the same
// database, the same executor protocol, the same configuration keys. Without a
// configured spring.datasource.url it runs on an embedded SQLite file instead.
//
//	xxl-admin-go [--config FILE] [--key=value ...]        run the admin
//	xxl-admin-go schema init [--layout=3.4|3.5|2.4] [...] create tables on an empty database
//	xxl-admin-go schema check [...]                       report the database's layout
//	xxl-admin-go schema upgrade [...]                     add our missing indexes and tables
//	xxl-admin-go schema export --out FILE [...]           write groups, jobs and users as JSON
//	xxl-admin-go schema import --in FILE [...]            load them into a fresh database
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	scheduler.TuneGC(os.Environ())
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "xxl-admin-go:", err)
		os.Exit(1)
	}
}

// run is main without the process: tests call it with their own arguments and stop it
// by cancelling ctx. ready, when non-nil, receives the listening address.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, ready chan<- string) error {
	args, own := cutOptions(args, ownOptions, commandFlags)
	cfg, err := loadConfig(args, environ)
	if err != nil {
		return err
	}
	applyOwnOptions(cfg, own, environ)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, w := range cfg.Warnings {
		log.Warn("configuration: " + w)
	}
	if len(cfg.Positional) > 0 {
		switch cfg.Positional[0] {
		case "schema":
			return schemaCommand(ctx, cfg, cfg.Positional[1:], stdout)
		case "serve":
		default:
			return fmt.Errorf("unknown command %q (want: serve, schema init, schema check, schema upgrade, schema export, schema import)", cfg.Positional[0])
		}
	}
	return serve(ctx, cfg, log, ready)
}
