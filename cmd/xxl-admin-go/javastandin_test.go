package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cron"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// javaStandIn plays a Java admin of the 3.4 line on a shared MySQL database (the real
// one, a jar built outside this repository, is TestSwapWithUpstreamJavaAdmins'); this
// stand-in does what ../shared/spec/scheduler.md and admin-http.md say that admin does
// on the database and on the wire, and nothing more:
//
//   - the scan (scheduler.md §3, the 3.4 column of §3.1): every second, one transaction
//     that first takes SELECT … FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR
//     UPDATE, reads the jobs with trigger_status = 1 due within 5 s, fires those due now
//     (the misfire strategy decides those late by more than 5 s), pushes the others into
//     an in-memory ring (§4), advances trigger_last_time and trigger_next_time;
//   - a fire (§7.2–7.3): the job and its group read afresh, a log row inserted with
//     trigger_code = 0, POST /run to the first address of the group (route FIRST for
//     every job), the outcome written to the log row;
//   - POST /api/callback (§9.2–9.3): answered first, then per result: a log whose
//     handle_code > 0 is left alone (upstream's only guard), the message appended, the
//     result stored, and the child jobs (child_jobid) of a success fired;
//   - POST /api/registry and /api/registryRemove on xxl_job_registry.
//
// Like the Java admin it knows nothing of workflows. Not played: the registry, lost-job
// and fail monitors, retries, alarms, the console, routes other than FIRST, the full
// trigger_msg text (its own is marked "java-stand-in").
type javaStandIn struct {
	db     *sql.DB
	token  string
	client *executor.Client
	base   string // http://127.0.0.1:<port>/xxl-job-admin
	loc    *time.Location

	mu      sync.Mutex
	ring    map[int64][]ringItem // second-of-minute → fires
	stored  map[int64]int        // log id → results stored here
	fired   map[int]int          // job id → fires made here
	planned map[int64]int64      // log id → planned time (ms) of a scheduled fire made here
	pause   time.Time            // the scan stalls until then

	stop    chan struct{}
	loops   sync.WaitGroup // scan and ring
	work    sync.WaitGroup // fires and callback handling
	srv     *http.Server
	stopped sync.Once
}

const standInMarker = "java-stand-in"

func startJavaStandIn(t *testing.T, db *schematest.DB, token string) *javaStandIn {
	t.Helper()
	conn, err := sql.Open("mysql", db.Config.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &javaStandIn{
		db: conn, token: token, loc: db.Loc,
		client: executor.New(executor.Options{Timeout: 3 * time.Second}),
		base:   fmt.Sprintf("http://%s/xxl-job-admin", ln.Addr()),
		ring:   map[int64][]ringItem{}, stored: map[int64]int{}, fired: map[int]int{}, planned: map[int64]int64{},
		stop: make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveAPI), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	s.loops.Add(2)
	go s.scanLoop()
	go s.ringLoop()
	t.Cleanup(s.shutdown)
	return s
}

// stopScheduling ends the scan and the ring; what the ring held is dropped, as a
// killed Java admin drops it (upstream's graceful stop fires it for 10 s more, see
// TestSwapWithUpstreamJavaAdmins). Callbacks are still served.
func (s *javaStandIn) stopScheduling() {
	s.stopped.Do(func() { close(s.stop) })
	s.loops.Wait()
}

// stallScan stops the scan for d from now, as a long GC pause of a Java admin would
// (its ring, its trigger pools and its callbacks go on).
func (s *javaStandIn) stallScan(d time.Duration) {
	s.mu.Lock()
	s.pause = time.Now().Add(d)
	s.mu.Unlock()
}

func (s *javaStandIn) shutdown() {
	s.stopScheduling()
	_ = s.srv.Close()
	s.work.Wait()
}

func (s *javaStandIn) sleepUntilNextSecond(period int64) bool {
	d := time.Duration(period-time.Now().UnixMilli()%1000) * time.Millisecond
	select {
	case <-s.stop:
		return false
	case <-time.After(d):
		return true
	}
}

func (s *javaStandIn) scanLoop() {
	defer s.loops.Done()
	for {
		s.mu.Lock()
		stall := time.Until(s.pause)
		s.mu.Unlock()
		if stall > 0 {
			select {
			case <-s.stop:
				return
			case <-time.After(stall):
			}
		}
		start := time.Now()
		found := s.scanOnce()
		if time.Since(start) < time.Second {
			period := int64(1000)
			if !found {
				period = 5000
			}
			if !s.sleepUntilNextSecond(period) {
				return
			}
		}
		select {
		case <-s.stop:
			return
		default:
		}
	}
}

type standInJob struct {
	id                 int
	scheduleType, conf string
	misfire            string
	next               int64
	last               int64
	stopJob            bool
}

// scanOnce is one scan; it reports whether it read any job.
func (s *javaStandIn) scanOnce() bool {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return true
	}
	defer func() { _ = tx.Commit() }() // upstream commits always
	var name string
	if err := tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&name); err != nil {
		return true
	}
	now := time.Now().UnixMilli()
	rows, err := tx.QueryContext(ctx, `SELECT id, schedule_type, COALESCE(schedule_conf, ''), misfire_strategy, trigger_next_time
		FROM xxl_job_info WHERE trigger_status = 1 AND trigger_next_time <= ? ORDER BY id ASC LIMIT 5000`, now+5000)
	if err != nil {
		return true
	}
	var jobs []*standInJob
	for rows.Next() {
		j := &standInJob{}
		if err := rows.Scan(&j.id, &j.scheduleType, &j.conf, &j.misfire, &j.next); err != nil {
			rows.Close()
			return true
		}
		jobs = append(jobs, j)
	}
	rows.Close()
	if len(jobs) == 0 {
		return false
	}
	for _, j := range jobs {
		switch {
		case now > j.next+5000: // missed by more than 5 s
			if j.misfire == "FIRE_ONCE_NOW" {
				s.fire(j.id, j.next)
			}
			s.refresh(j, time.Now().UnixMilli())
		case now >= j.next: // due (3.4: >=): fired directly
			s.fire(j.id, j.next)
			s.refresh(j, time.Now().UnixMilli())
		default: // due within 5 s: the ring fires it at its second
			s.mu.Lock()
			sec := j.next / 1000 % 60
			s.ring[sec] = append(s.ring[sec], ringItem{j.id, j.next})
			s.mu.Unlock()
			s.refresh(j, j.next)
		}
	}
	for _, j := range jobs {
		if j.stopJob {
			_, _ = tx.ExecContext(ctx, `UPDATE xxl_job_info SET trigger_status = 0, trigger_last_time = 0, trigger_next_time = 0
				WHERE id = ? AND trigger_status = 1`, j.id)
			continue
		}
		_, _ = tx.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_last_time = ?, trigger_next_time = ? WHERE id = ?", j.last, j.next, j.id)
	}
	return true
}

// refresh computes the next fire time from `from` (ms), or stops the job when there is
// none (scheduler.md §5.1: CRON and FIX_RATE only).
func (s *javaStandIn) refresh(j *standInJob, from int64) {
	var next int64
	switch j.scheduleType {
	case "CRON":
		if e, err := cron.Parse(j.conf); err == nil {
			if n, ok := e.Next(time.UnixMilli(from), s.loc); ok {
				next = n.UnixMilli()
			}
		}
	case "FIX_RATE":
		if secs, err := strconv.ParseInt(j.conf, 10, 64); err == nil && secs > 0 {
			next = (from + secs*1000 + 999) / 1000 * 1000
		}
	}
	if next == 0 {
		j.stopJob = true
		return
	}
	j.last, j.next = j.next, next
}

// ringItem is a fire in the ring. Upstream's ring holds job ids only; the planned time
// is kept here for the test's accounting.
type ringItem struct {
	job     int
	planned int64
}

// ringLoop wakes at each second and fires the jobs of that slot and the two before it
// (3.3.0+), each job id once per slot.
func (s *javaStandIn) ringLoop() {
	defer s.loops.Done()
	for s.sleepUntilNextSecond(1000) {
		sec := time.Now().Unix() % 60
		var items []ringItem
		s.mu.Lock()
		for i := int64(0); i < 3; i++ {
			slot := (sec - i + 60) % 60
			seen := map[int]bool{}
			for _, it := range s.ring[slot] {
				if !seen[it.job] {
					seen[it.job] = true
					items = append(items, it)
				}
			}
			delete(s.ring, slot)
		}
		s.mu.Unlock()
		for _, it := range items {
			s.fire(it.job, it.planned)
		}
	}
}

// fire triggers a job on a goroutine, as upstream's trigger pools do; planned is the
// planned time of a scheduled fire, 0 for a child job.
func (s *javaStandIn) fire(jobID int, planned int64) {
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		s.trigger(jobID, planned)
	}()
}

func (s *javaStandIn) trigger(jobID int, planned int64) {
	ctx := context.Background()
	var group, timeout, retry int
	var handler, param, block, glueType, glueSource, addresses sql.NullString
	var glueUpdated sql.NullTime
	err := s.db.QueryRowContext(ctx, `SELECT j.job_group, j.executor_handler, j.executor_param, j.executor_block_strategy,
			j.executor_timeout, j.executor_fail_retry_count, j.glue_type, j.glue_source, j.glue_updatetime, g.address_list
		FROM xxl_job_info j JOIN xxl_job_group g ON g.id = j.job_group WHERE j.id = ?`, jobID).
		Scan(&group, &handler, &param, &block, &timeout, &retry, &glueType, &glueSource, &glueUpdated, &addresses)
	if err != nil {
		return // a missing job: no log row
	}
	triggerTime := time.Now()
	res, err := s.db.ExecContext(ctx, "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code) VALUES (?, ?, ?, 0, 0)",
		group, jobID, triggerTime)
	if err != nil {
		return
	}
	logID, _ := res.LastInsertId()
	s.mu.Lock()
	s.fired[jobID]++
	if planned > 0 {
		s.planned[logID] = planned
	}
	s.mu.Unlock()
	p := &protocol.TriggerParam{
		JobID: jobID, ExecutorHandler: handler.String, ExecutorParams: param.String, ExecutorBlockStrategy: block.String,
		ExecutorTimeout: timeout, LogID: logID, LogDateTime: triggerTime.UnixMilli(), GlueType: glueType.String,
		GlueSource: glueSource.String, GlueUpdatetime: glueUpdated.Time.UnixMilli(), BroadcastIndex: 0, BroadcastTotal: 1,
	}
	code, msg := 500, "address route fail."
	var address any // NULL when none
	if list := strings.Split(addresses.String, ","); addresses.String != "" {
		address = list[0]
		r := s.client.Run(ctx, executor.Target{Address: list[0], AccessToken: s.token}, p)
		code, msg = r.Code, r.Msg
	}
	_, _ = s.db.ExecContext(ctx, `UPDATE xxl_job_log SET trigger_time = ?, trigger_code = ?, trigger_msg = ?, executor_address = ?,
		executor_handler = ?, executor_param = ?, executor_fail_retry_count = ? WHERE id = ?`,
		triggerTime, code, standInMarker+": "+msg, address, handler.String, param.String, retry, logID)
}

func (s *javaStandIn) reply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	if code == 200 {
		_, _ = io.WriteString(w, `{"code":200,"msg":"Success","data":null,"success":true}`)
		return
	}
	_, _ = w.Write(append(append([]byte(`{"code":500,"msg":`), protocol.AppendString(nil, msg)...), `,"data":null,"success":false}`...))
}

func (s *javaStandIn) serveAPI(w http.ResponseWriter, r *http.Request) {
	uri, ok := strings.CutPrefix(r.URL.Path, "/xxl-job-admin/api/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		s.reply(w, 500, "invalid request, HttpMethod not support.")
		return
	}
	if r.Header.Get("XXL-JOB-ACCESS-TOKEN") != s.token {
		s.reply(w, 500, "The access token is wrong.")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || len(body) == 0 {
		s.reply(w, 500, "invalid request, requestBody empty.")
		return
	}
	ctx := context.Background()
	switch uri {
	case "callback":
		items, err := protocol.DecodeCallbacks(body)
		if err != nil {
			s.reply(w, 500, "openapi invoke error: "+err.Error())
			return
		}
		// Upstream answers first and stores on its callback pool.
		s.work.Add(1)
		go func() {
			defer s.work.Done()
			for _, it := range items {
				s.complete(ctx, it)
			}
		}()
	case "registry", "registryRemove":
		p, err := protocol.DecodeRegistry(body)
		if err != nil {
			s.reply(w, 500, "openapi invoke error: "+err.Error())
			return
		}
		if uri == "registryRemove" {
			_, _ = s.db.ExecContext(ctx, "DELETE FROM xxl_job_registry WHERE registry_group = ? AND registry_key = ? AND registry_value = ?",
				p.RegistryGroup, p.RegistryKey, p.RegistryValue)
			break
		}
		res, err := s.db.ExecContext(ctx, "UPDATE xxl_job_registry SET update_time = ? WHERE registry_group = ? AND registry_key = ? AND registry_value = ?",
			time.Now(), p.RegistryGroup, p.RegistryKey, p.RegistryValue)
		if n, _ := res.RowsAffected(); err == nil && n == 0 {
			_, _ = s.db.ExecContext(ctx, "INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) VALUES (?, ?, ?, ?)",
				p.RegistryGroup, p.RegistryKey, p.RegistryValue, time.Now())
		}
	default:
		s.reply(w, 500, "invalid request, uri-mapping("+uri+") not found.")
		return
	}
	s.reply(w, 200, "")
}

// complete stores one result (scheduler.md §9.2–9.3).
func (s *javaStandIn) complete(ctx context.Context, it protocol.CallbackItem) {
	var jobID, handleCode int
	var old sql.NullString
	if err := s.db.QueryRowContext(ctx, "SELECT job_id, handle_code, handle_msg FROM xxl_job_log WHERE id = ?", it.LogID).
		Scan(&jobID, &handleCode, &old); err != nil || handleCode > 0 {
		return // "log item not found." / "log repeate callback."
	}
	msg := ""
	if old.Valid {
		msg = old.String + "<br>"
	}
	if it.HandleMsg != nil {
		msg += *it.HandleMsg
	}
	if it.HandleCode == 200 {
		var children sql.NullString
		_ = s.db.QueryRowContext(ctx, "SELECT child_jobid FROM xxl_job_info WHERE id = ?", jobID).Scan(&children)
		if strings.TrimSpace(children.String) != "" {
			msg += `<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>Trigger child job<<<<<<<<<<< </span><br>`
			list := strings.Split(children.String, ",")
			for i, c := range list {
				child, err := strconv.Atoi(c)
				if err == nil && child == jobID {
					continue // 2.5.0+: the job itself is skipped silently
				}
				if err != nil || child <= 0 {
					msg += fmt.Sprintf("%d/%d [Job ID=%s], Trigger Fail, Trigger msg: Job ID is illegal <br>", i+1, len(list), c)
					continue
				}
				s.fire(child, 0)
				msg += fmt.Sprintf("%d/%d [Job ID=%s], Trigger Success, Trigger msg: Success <br>", i+1, len(list), c)
			}
		}
	}
	if len(msg) > 15000 {
		msg = msg[:15000]
	}
	if _, err := s.db.ExecContext(ctx, "UPDATE xxl_job_log SET handle_time = ?, handle_code = ?, handle_msg = ? WHERE id = ?",
		time.Now(), it.HandleCode, msg, it.LogID); err == nil {
		s.mu.Lock()
		s.stored[it.LogID]++
		s.mu.Unlock()
	}
}

// storedHere returns how many results the stand-in stored for a log.
func (s *javaStandIn) storedHere(logID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[logID]
}

// plannedHere returns the planned time (ms) of a scheduled fire the stand-in made as
// log logID, or false.
func (s *javaStandIn) plannedHere(logID int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.planned[logID]
	return p, ok
}

// firedHere returns how many fires of a job the stand-in made.
func (s *javaStandIn) firedHere(jobID int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired[jobID]
}
