// Command standin-executor is a stand-in for an xxl-job-core executor, for the
// conformance suite where no real one can be built: the fake executor of
// compat/executor/executortest run as a process of its own. It speaks the protocol of
// xxl-job-core 3.5 (or 3.4 with KIND=java342) as wire-protocol.md and the recorded
// transcripts describe it; it is written from those, not from upstream's code.
//
// Configured as every conformance executor is, by environment: ADMIN (admin base URL
// with context path), APPNAME, PORT (on 127.0.0.1) and TOKEN. It registers at start
// and every 30 s, offers demoJobHandler (succeeds, logs its parameter),
// failJobHandler (fails), slowJobHandler (runs *param* seconds, 5 by default) and
// shardingJobHandler ("shard <index>/<total>"), posts a refused callback again every
// 30 s as xxl-job-core does, prints "READY <port>" once listening, and unregisters on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// beat is xxl-job-core's registry interval (BEAT_TIMEOUT) and callback retry pause.
const beat = 30 * time.Second

func main() {
	if err := run(); err != nil {
		log.Fatalf("standin-executor: %v", err)
	}
}

func run() error {
	kinds := map[string]executortest.Kind{"javaP3": executortest.KindJavaP3, "java342": executortest.KindJava342}
	kind, ok := kinds[env("KIND", "javaP3")]
	if !ok {
		return fmt.Errorf("KIND=%q: want javaP3 (xxl-job-core 3.5) or java342 (3.3–3.4.2)", os.Getenv("KIND"))
	}
	port, err := strconv.Atoi(env("PORT", "9999"))
	if err != nil {
		return fmt.Errorf("PORT: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	e := executortest.Serve(ln, executortest.Config{
		Kind: kind, AppName: env("APPNAME", "xxl-job-executor-sample"), AccessToken: env("TOKEN", "default_token"),
		AdminAddresses: env("ADMIN", "http://127.0.0.1:8080"), CallbackRetry: beat,
	})
	handlers(e)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Printf("READY %d\n", port)
	register := func() {
		if r := e.Register(ctx); !r.OK() {
			log.Printf("registry: code %d %q %v", r.Code, r.Msg, r.Err)
		}
	}
	register()
	tick := time.NewTicker(beat)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			register()
		case <-ctx.Done():
			// Unregister before the server goes, as xxl-job-core's shutdown hook does.
			bye, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r := e.RegistryRemove(bye)
			cancel()
			if !r.OK() {
				log.Printf("registryRemove: code %d %q %v", r.Code, r.Msg, r.Err)
			}
			e.Close()
			return nil
		}
	}
}

// handlers installs the conformance suite's four job handlers.
func handlers(e *executortest.Executor) {
	msg := func(s string) *string { return &s }
	e.Handle("demoJobHandler", executortest.Behavior{Decide: func(p protocol.TriggerParam) executortest.Behavior {
		return executortest.Behavior{HandleMsg: msg(strings.TrimSpace("demo ok " + p.ExecutorParams))}
	}})
	e.Handle("failJobHandler", executortest.Behavior{HandleCode: protocol.CodeFail, HandleMsg: msg("failJobHandler failed on purpose")})
	e.Handle("slowJobHandler", executortest.Behavior{Decide: func(p protocol.TriggerParam) executortest.Behavior {
		secs, err := strconv.Atoi(strings.TrimSpace(p.ExecutorParams))
		if err != nil {
			secs = 5
		}
		return executortest.Behavior{RunTime: time.Duration(secs) * time.Second, HandleMsg: msg(fmt.Sprintf("slept %ds", secs))}
	}})
	e.Handle("shardingJobHandler", executortest.Behavior{Decide: func(p protocol.TriggerParam) executortest.Behavior {
		return executortest.Behavior{HandleMsg: msg(fmt.Sprintf("shard %d/%d", p.BroadcastIndex, p.BroadcastTotal))}
	}})
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
