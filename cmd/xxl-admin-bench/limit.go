package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LimitResult is the database-only reference: the per-trigger work of the admin done by
// a minimal batched loop, as fast as the database allows.
type LimitResult struct {
	Batch           int              `json:"batch"`
	Workers         int              `json:"workers"`
	Seconds         float64          `json:"seconds"`
	Triggers        int64            `json:"triggers"`
	PerSec          float64          `json:"triggers_per_sec"`
	Status          map[string]int64 `json:"status_delta"`
	StmtPerTrigger  float64          `json:"statements_per_trigger"`
	DBCPUSeconds    float64          `json:"db_cpu_seconds"`
	DBCPUPerTrigger float64          `json:"db_cpu_us_per_trigger"`
	LoopCPUSeconds  float64          `json:"loop_cpu_seconds"`
	LoopCPUPerTrig  float64          `json:"loop_cpu_us_per_trigger"`
}

// limitLoop runs, for d, workers goroutines that each repeat for a batch of jobs:
//
//  1. the scan: BEGIN; lock row FOR UPDATE; read the jobs; one CASE UPDATE of their
//     trigger_last_time/trigger_next_time; COMMIT;
//  2. one multi-row INSERT of their log rows;
//  3. one CASE UPDATE of the trigger outcome (trigger_code, trigger_msg, address, …);
//  4. one UPDATE of the results (handle_code, handle_msg, handle_time), guarded by
//     handle_code = 0 as the callback's is.
//
// That is the database work the admin does per trigger, in the fewest round trips.
func (b *benchDB) limitLoop(ctx context.Context, jobs []int, groupOf map[int]int, addrs []string, batch, workers int, d time.Duration, msgLen int, dbPID int) (LimitResult, error) {
	res := LimitResult{Batch: batch, Workers: workers}
	if len(jobs) == 0 || batch <= 0 || workers <= 0 {
		return res, nil
	}
	batch = min(batch, len(jobs))
	res.Batch = batch
	msg := strings.Repeat("x", max(msgLen-12, 1))
	before, err := b.globalStatus(ctx)
	if err != nil {
		return res, err
	}
	dbCPU0, _ := cpuOf(dbPID)
	cpu0 := cpuSelf()
	start := time.Now()
	deadline := start.Add(d)
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			off := (w * batch) % len(jobs)
			for time.Now().Before(deadline) {
				ids := make([]int, 0, batch)
				for i := 0; i < batch; i++ {
					ids = append(ids, jobs[(off+i)%len(jobs)])
				}
				off = (off + workers*batch) % len(jobs)
				if err := b.limitBatch(ctx, ids, groupOf, addrs, msg); err != nil {
					errs <- err
					return
				}
				done.Add(int64(len(ids)))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return res, fmt.Errorf("limit loop: %w", err)
	}
	cpu := cpuSelf() - cpu0
	dbCPU1, ok := cpuOf(dbPID)
	after, err := b.globalStatus(ctx)
	if err != nil {
		return res, err
	}
	res.Seconds = elapsed.Seconds()
	res.Triggers = done.Load()
	res.PerSec = float64(res.Triggers) / res.Seconds
	res.Status = diffStatus(before, after)
	res.StmtPerTrigger = float64(statements(res.Status)) / float64(max(res.Triggers, 1))
	res.LoopCPUSeconds = cpu.Seconds()
	res.LoopCPUPerTrig = float64(cpu.Microseconds()) / float64(max(res.Triggers, 1))
	if ok {
		res.DBCPUSeconds = (dbCPU1 - dbCPU0).Seconds()
		res.DBCPUPerTrigger = float64((dbCPU1 - dbCPU0).Microseconds()) / float64(max(res.Triggers, 1))
	}
	return res, nil
}

func sqlString(s string) string {
	if pgServer != nil { // standard_conforming_strings: a backslash is a character
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func (b *benchDB) limitBatch(ctx context.Context, ids []int, groupOf map[int]int, addrs []string, msg string) error {
	now := time.Now()
	nowMs := now.UnixMilli()
	in := make([]string, len(ids))
	for i, id := range ids {
		in[i] = strconv.Itoa(id)
	}
	inList := strings.Join(in, ",")

	// 1. The scan's share: lock, pre-read, next-time update, in one transaction.
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var lock string
	if err := tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&lock); err != nil {
		_ = tx.Rollback()
		return err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time FROM xxl_job_info WHERE id IN ("+inList+")")
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	var last, next strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&last, " WHEN %d THEN %d", id, nowMs)
		fmt.Fprintf(&next, " WHEN %d THEN %d", id, nowMs+1000)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_last_time = CASE id"+last.String()+" END, trigger_next_time = CASE id"+next.String()+" END WHERE id IN ("+inList+") AND trigger_status = 1"); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}

	// 2. The log rows.
	tt := b.sqlTime(now)
	var ins strings.Builder
	ins.WriteString("INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code) VALUES ")
	for i, id := range ids {
		if i > 0 {
			ins.WriteByte(',')
		}
		fmt.Fprintf(&ins, "(%d,%d,%s,0,0)", groupOf[id], id, tt)
	}
	newIDs, err := b.insertIDs(ctx, ins.String(), len(ids)) // postgres.go
	if err != nil {
		return err
	}
	logIDs := make([]string, len(ids))
	for i, id := range newIDs {
		logIDs[i] = strconv.FormatInt(id, 10)
	}
	logList := strings.Join(logIDs, ",")

	// 3. The trigger outcome.
	var tmsg, addr strings.Builder
	for i, l := range logIDs {
		fmt.Fprintf(&tmsg, " WHEN %s THEN %s", l, sqlString(msg+" "+l))
		fmt.Fprintf(&addr, " WHEN %s THEN %s", l, sqlString(addrs[i%len(addrs)]))
	}
	if _, err := b.db.ExecContext(ctx, "UPDATE xxl_job_log SET trigger_time = "+tt+", trigger_code = 200, trigger_msg = CASE id"+tmsg.String()+
		" END, executor_address = CASE id"+addr.String()+" END, executor_handler = 'benchHandler', executor_param = '', executor_sharding_param = NULL, executor_fail_retry_count = 0 WHERE id IN ("+logList+")"); err != nil {
		return err
	}

	// 4. The results.
	if _, err := b.db.ExecContext(ctx, "UPDATE xxl_job_log SET handle_time = ?, handle_code = 200, handle_msg = '' WHERE id IN ("+logList+") AND handle_code = 0", time.Now()); err != nil {
		return err
	}
	return nil
}
