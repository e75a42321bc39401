package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Startup is the start-up measurement: a fresh admin process on a database holding the
// jobs and registered executors, started several times.
type Startup struct {
	Binary string           `json:"binary"`
	Runs   []StartupRun     `json:"runs"`
	Median StartupRunMedian `json:"median"`
}

// StartupRun is one admin start.
type StartupRun struct {
	// ServingMs is from exec to the first answered health check.
	ServingMs       int64   `json:"serving_ms"`
	RSSAtServingMiB float64 `json:"rss_at_serving_mib"`
	// Over the settle time after serving (the scan and the registry monitor run, the
	// jobs fire): peak RSS, final RSS, CPU.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	RSSEndMiB  float64 `json:"rss_end_mib"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Triggers   int64   `json:"triggers"`
}

// StartupRunMedian is the median of each figure over the runs.
type StartupRunMedian struct {
	ServingMs  int64   `json:"serving_ms"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
}

func startup(ctx context.Context, o options, server *mysql.Config, b *benchDB, res *Result) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	adminURL := fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port)
	apps := make([]string, o.Groups)
	for i := range apps {
		apps[i] = "bench-" + strconv.Itoa(i)
	}
	// The executors run in this process: the admin is the child being measured. They
	// beat every 30 s like real ones; the rows are also seeded so the first registry
	// monitor pass already sees all of them.
	f, err := startFleet(FleetOptions{Count: o.Executors, Addresses: o.Registry, AdminURL: adminURL, Token: o.Token,
		RunLatency: o.RunLatency, CallbackDelay: o.CallbackDelay, CallbackBatch: o.CallbackBatch, CallbackTimeout: o.CallbackTimeout, RegistryApps: apps})
	if err != nil {
		return err
	}
	defer f.close()
	groups, err := b.seedGroups(ctx, apps, true, func(i int) string { return apps[i] })
	if err != nil {
		return err
	}
	if _, err := b.seedJobs(ctx, o.Jobs, groups, o.Mix, o.Route); err != nil {
		return err
	}
	if err := b.seedRegistry(ctx, func(i int) string { return apps[i] }, len(apps), f.addresses); err != nil {
		return err
	}
	var cmdArgs []string
	bin := o.AdminBin
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		bin = self
		cmdArgs = []string{"-role=admin", "--"}
		res.Startup = &Startup{Binary: "built-in admin (same packages and wiring as cmd/xxl-admin-go)"}
	} else {
		res.Startup = &Startup{Binary: bin}
	}
	cmdArgs = append(cmdArgs, adminArgs(server, o.DB, o.Token, port, append([]string{"--server.address=127.0.0.1"}, o.AdminArgs...))...)
	health := adminURL + "/actuator/health"
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

	for run := 0; run < max(o.StartupRuns, 1); run++ {
		// Jobs running, first fire a few seconds after the start: the admin comes up
		// with a full schedule, as it does when replacing a running one.
		if err := b.startJobs(ctx, time.Now().Truncate(time.Second).Add(7*time.Second).UnixMilli()); err != nil {
			return err
		}
		if _, err := b.db.ExecContext(ctx, "UPDATE xxl_job_registry SET update_time = "+b.sqlTime(time.Now())); err != nil {
			return err
		}
		var logsBefore int64
		_ = b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM xxl_job_log").Scan(&logsBefore)

		cmd := exec.Command(bin, cmdArgs...)
		cmd.Stderr = os.Stderr
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start admin: %w", err)
		}
		pid := cmd.Process.Pid
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var m StartupRun
		for {
			resp, err := hc.Get(health)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					m.ServingMs = time.Since(t0).Milliseconds()
					rss, _ := memOf(pid)
					m.RSSAtServingMiB = mib(rss)
					break
				}
			}
			select {
			case err := <-exited:
				return fmt.Errorf("admin exited before serving: %v", err)
			case <-time.After(2 * time.Millisecond):
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				return errStop
			}
			if time.Since(t0) > time.Minute {
				_ = cmd.Process.Kill()
				return fmt.Errorf("admin not serving after a minute")
			}
		}
		settleEnd := time.Now().Add(o.StartupSettle)
		for time.Now().Before(settleEnd) {
			select {
			case err := <-exited:
				return fmt.Errorf("admin exited while settling: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		rss, peak := memOf(pid)
		cpu, _ := cpuOf(pid)
		m.PeakRSSMiB, m.RSSEndMiB, m.CPUSeconds = mib(peak), mib(rss), cpu.Seconds()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		var logsAfter int64
		_ = b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM xxl_job_log").Scan(&logsAfter)
		m.Triggers = logsAfter - logsBefore
		res.Startup.Runs = append(res.Startup.Runs, m)
		fmt.Fprintf(os.Stderr, "start %d: serving after %d ms, peak RSS %.0f MiB\n", run+1, m.ServingMs, m.PeakRSSMiB)
	}
	var serving []int64
	var peaks []float64
	for _, m := range res.Startup.Runs {
		serving = append(serving, m.ServingMs)
		peaks = append(peaks, m.PeakRSSMiB)
	}
	slices.Sort(serving)
	slices.Sort(peaks)
	res.Startup.Median = StartupRunMedian{ServingMs: serving[len(serving)/2], PeakRSSMiB: peaks[len(peaks)/2]}
	return nil
}
