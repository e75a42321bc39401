// Command xxl-admin-go is a drop-in replacement for the Java xxl-job-admin: the same
// database, the same executor protocol, the same configuration keys. Without a
// configured spring.datasource.url it runs on an embedded SQLite file instead.
//
// The commands and their help are listed in one place, commands in cli.go; run
// `xxl-admin-go --help` for them.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	scheduler.TuneGC(os.Environ())
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "xxl-admin-go:", err)
		if errUsage(err) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run is main without the process: tests call it with their own arguments and stop it
// by cancelling ctx. ready, when non-nil, receives the listening address.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, ready chan<- string) error {
	cl, err := parseCommandLine(args) // cli.go
	if err != nil {
		return err
	}
	switch {
	case cl.help != "":
		_, err := io.WriteString(stdout, cl.help)
		return err
	case cl.version:
		_, err := io.WriteString(stdout, versionText())
		return err
	}
	cfg, err := config.Load(cl.rest, environ)
	if err != nil {
		if errUsage(err) {
			return fmt.Errorf("%w (xxl-admin-go --help lists the commands and options)", err)
		}
		return err
	}
	applyOwnOptions(cfg, cl.own, environ)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, w := range cfg.Warnings {
		log.Warn("configuration: " + w)
	}
	return cl.cmd.run(ctx, &invocation{cfg: cfg, log: log, stdout: stdout, ready: ready})
}
