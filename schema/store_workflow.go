package schema

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Workflows (docs/WORKFLOWS.md) live in tables of this admin's own, which Java admins
// never read: the definitions, their runs, and the nodes of each run; the graph
// versions runs share and the definitions' jobs are store_workflow_graph.go's. A run
// reads the graph version it started with, so editing a workflow never changes a run
// under way. Times are milliseconds since 1970 (no DATETIME zone to agree on). Every change
// to a run is made under the run row's lock (LockWorkflowRun), which orders admins that
// advance the same run; the node rows and their log rows change in that transaction.

// Workflow table names.
const (
	WorkflowTable        = "xxl_admin_workflow"
	WorkflowRunTable     = "xxl_admin_workflow_run"
	WorkflowNodeRunTable = "xxl_admin_workflow_node_run"
)

// Run and node states (docs/WORKFLOWS.md, "States").
const (
	WorkflowWaiting   = "waiting"
	WorkflowRunning   = "running"
	WorkflowSucceeded = "succeeded"
	WorkflowFailed    = "failed"
	WorkflowSkipped   = "skipped"
	WorkflowCancelled = "cancelled"
)

// WorkflowTableMySQL is the creation script of the workflow tables on MySQL and MariaDB.
// i_due serves the schedule's look for due workflows, i_state the safety net's look
// for runs to check, i_log the callback path's look from a log id to its node.
const WorkflowTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_workflow` (\n" +
	"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
	"  `name` varchar(128) NOT NULL,\n" +
	"  `graph` mediumtext NOT NULL COMMENT 'JSON: nodes (name, jobId, param) and edges (from, to, when, field, equals)',\n" +
	"  `group_ids` text NOT NULL COMMENT 'comma-separated executor groups of the nodes'' jobs',\n" +
	"  `schedule_type` varchar(16) NOT NULL DEFAULT 'NONE' COMMENT 'CRON, FIX_RATE, NONE',\n" +
	"  `schedule_conf` varchar(128) NOT NULL DEFAULT '',\n" +
	"  `misfire_strategy` varchar(16) NOT NULL DEFAULT 'DO_NOTHING',\n" +
	"  `failure_policy` varchar(16) NOT NULL DEFAULT 'STOP' COMMENT 'STOP, CONTINUE',\n" +
	"  `run_timeout` int(11) NOT NULL DEFAULT '0' COMMENT 'seconds; 0: none',\n" +
	"  `trigger_status` tinyint(4) NOT NULL DEFAULT '0' COMMENT '1: scheduled',\n" +
	"  `trigger_next_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970',\n" +
	"  `author` varchar(64) NOT NULL DEFAULT '',\n" +
	"  `add_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  `update_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  KEY `i_due` (`trigger_status`, `trigger_next_time`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go workflow definitions';\n" +
	"CREATE TABLE IF NOT EXISTS `xxl_admin_workflow_run` (\n" +
	"  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
	"  `workflow_id` int(11) NOT NULL,\n" +
	"  `graph` mediumtext NOT NULL COMMENT 'the graph the run started with',\n" +
	"  `failure_policy` varchar(16) NOT NULL,\n" +
	"  `state` varchar(16) NOT NULL COMMENT 'running, succeeded, failed, cancelled',\n" +
	"  `input` text COMMENT 'the input parameter given at the start',\n" +
	"  `trigger_type` varchar(16) NOT NULL COMMENT 'MANUAL, API, CRON, MISFIRE',\n" +
	"  `fire_time` bigint(20) NOT NULL COMMENT 'planned start, ms since 1970',\n" +
	"  `start_time` bigint(20) NOT NULL,\n" +
	"  `end_time` bigint(20) NOT NULL DEFAULT '0',\n" +
	"  `deadline` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970; 0: no timeout',\n" +
	"  `check_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'when the safety net looks at the run again',\n" +
	"  `msg` varchar(1024) NOT NULL DEFAULT '',\n" +
	"  `create_user` varchar(128) NOT NULL DEFAULT '',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  KEY `i_workflow` (`workflow_id`, `id`),\n" +
	"  KEY `i_state` (`state`, `check_time`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go workflow runs';\n" +
	"CREATE TABLE IF NOT EXISTS `xxl_admin_workflow_node_run` (\n" +
	"  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
	"  `run_id` bigint(20) NOT NULL,\n" +
	"  `node` varchar(64) NOT NULL,\n" +
	"  `job_id` int(11) NOT NULL,\n" +
	"  `state` varchar(16) NOT NULL COMMENT 'waiting, running, succeeded, failed, skipped, cancelled',\n" +
	"  `attempt` int(11) NOT NULL DEFAULT '0' COMMENT '1 for the first attempt; 0: not fired',\n" +
	"  `log_id` bigint(20) NOT NULL DEFAULT '0' COMMENT 'xxl_job_log row of the latest attempt',\n" +
	"  `param` text COMMENT 'the rendered executor parameter',\n" +
	"  `output` text COMMENT 'the handle message of the latest attempt',\n" +
	"  `start_time` bigint(20) NOT NULL DEFAULT '0',\n" +
	"  `end_time` bigint(20) NOT NULL DEFAULT '0',\n" +
	"  `msg` varchar(1024) NOT NULL DEFAULT '',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  UNIQUE KEY `i_run_node` (`run_id`, `node`),\n" +
	"  KEY `i_log` (`log_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go nodes of workflow runs';\n"

// WorkflowTableSQLite is the creation script of the workflow tables in the embedded
// file.
const WorkflowTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_workflow (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  graph TEXT NOT NULL,
  group_ids TEXT NOT NULL,
  schedule_type TEXT NOT NULL DEFAULT 'NONE',
  schedule_conf TEXT NOT NULL DEFAULT '',
  misfire_strategy TEXT NOT NULL DEFAULT 'DO_NOTHING',
  failure_policy TEXT NOT NULL DEFAULT 'STOP',
  run_timeout INTEGER NOT NULL DEFAULT 0,
  trigger_status INTEGER NOT NULL DEFAULT 0,
  trigger_next_time INTEGER NOT NULL DEFAULT 0,
  author TEXT NOT NULL DEFAULT '',
  add_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_i_due ON xxl_admin_workflow (trigger_status, trigger_next_time);
CREATE TABLE IF NOT EXISTS xxl_admin_workflow_run (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workflow_id INTEGER NOT NULL,
  graph TEXT NOT NULL,
  failure_policy TEXT NOT NULL,
  state TEXT NOT NULL,
  input TEXT,
  trigger_type TEXT NOT NULL,
  fire_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL DEFAULT 0,
  deadline INTEGER NOT NULL DEFAULT 0,
  check_time INTEGER NOT NULL DEFAULT 0,
  msg TEXT NOT NULL DEFAULT '',
  create_user TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_run_i_workflow ON xxl_admin_workflow_run (workflow_id, id);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_run_i_state ON xxl_admin_workflow_run (state, check_time);
CREATE TABLE IF NOT EXISTS xxl_admin_workflow_node_run (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL,
  node TEXT NOT NULL,
  job_id INTEGER NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  log_id INTEGER NOT NULL DEFAULT 0,
  param TEXT,
  output TEXT,
  start_time INTEGER NOT NULL DEFAULT 0,
  end_time INTEGER NOT NULL DEFAULT 0,
  msg TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS xxl_admin_workflow_node_run_i_run_node ON xxl_admin_workflow_node_run (run_id, node);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_node_run_i_log ON xxl_admin_workflow_node_run (log_id);
`

// WorkflowTablePostgreSQL is the creation script of the workflow tables on PostgreSQL.
const WorkflowTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_workflow (
  id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name VARCHAR(128) NOT NULL,
  graph TEXT NOT NULL,
  group_ids TEXT NOT NULL,
  schedule_type VARCHAR(16) NOT NULL DEFAULT 'NONE',
  schedule_conf VARCHAR(128) NOT NULL DEFAULT '',
  misfire_strategy VARCHAR(16) NOT NULL DEFAULT 'DO_NOTHING',
  failure_policy VARCHAR(16) NOT NULL DEFAULT 'STOP',
  run_timeout INTEGER NOT NULL DEFAULT 0,
  trigger_status SMALLINT NOT NULL DEFAULT 0,
  trigger_next_time BIGINT NOT NULL DEFAULT 0,
  author VARCHAR(64) NOT NULL DEFAULT '',
  add_time BIGINT NOT NULL,
  update_time BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_i_due ON xxl_admin_workflow (trigger_status, trigger_next_time);
CREATE TABLE IF NOT EXISTS xxl_admin_workflow_run (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  workflow_id INTEGER NOT NULL,
  graph TEXT NOT NULL,
  failure_policy VARCHAR(16) NOT NULL,
  state VARCHAR(16) NOT NULL,
  input TEXT,
  trigger_type VARCHAR(16) NOT NULL,
  fire_time BIGINT NOT NULL,
  start_time BIGINT NOT NULL,
  end_time BIGINT NOT NULL DEFAULT 0,
  deadline BIGINT NOT NULL DEFAULT 0,
  check_time BIGINT NOT NULL DEFAULT 0,
  msg VARCHAR(1024) NOT NULL DEFAULT '',
  create_user VARCHAR(128) NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_run_i_workflow ON xxl_admin_workflow_run (workflow_id, id);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_run_i_state ON xxl_admin_workflow_run (state, check_time);
CREATE TABLE IF NOT EXISTS xxl_admin_workflow_node_run (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  run_id BIGINT NOT NULL,
  node VARCHAR(64) NOT NULL,
  job_id INTEGER NOT NULL,
  state VARCHAR(16) NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  log_id BIGINT NOT NULL DEFAULT 0,
  param TEXT,
  output TEXT,
  start_time BIGINT NOT NULL DEFAULT 0,
  end_time BIGINT NOT NULL DEFAULT 0,
  msg VARCHAR(1024) NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS xxl_admin_workflow_node_run_i_run_node ON xxl_admin_workflow_node_run (run_id, node);
CREATE INDEX IF NOT EXISTS xxl_admin_workflow_node_run_i_log ON xxl_admin_workflow_node_run (log_id);
`

// workflowOwnTable registers the three workflow tables with schema init, upgrade and
// check (OwnTables): one entry, as they are created together and one is of no use
// without the others. Its name is the first table's; check reports it missing when
// that one is.
var workflowOwnTable = OwnTable{
	Name:       WorkflowTable,
	Purpose:    "workflows: definitions, runs and the nodes of each run (xxl_admin_workflow, _run, _node_run)",
	MySQL:      WorkflowTableMySQL,
	SQLite:     WorkflowTableSQLite,
	PostgreSQL: WorkflowTablePostgreSQL,
}

// WorkflowOptionTable holds a workflow's settings added after the workflow tables
// shipped (a table of its own, so that `schema upgrade` adds it to a database that has
// the others; no column of theirs changes).
const WorkflowOptionTable = "xxl_admin_workflow_option"

// WorkflowOptionTableMySQL is the creation script of the workflow option table on
// MySQL and MariaDB.
const WorkflowOptionTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_workflow_option` (\n" +
	"  `workflow_id` int(11) NOT NULL COMMENT 'xxl_admin_workflow.id',\n" +
	"  `time_zone` varchar(64) NOT NULL DEFAULT '' COMMENT 'IANA zone CRON is evaluated in; empty: the admin''s zone',\n" +
	"  PRIMARY KEY (`workflow_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go settings of a workflow beyond xxl_admin_workflow';\n"

// WorkflowOptionTableSQLite is the creation script of the workflow option table in
// the embedded file.
const WorkflowOptionTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_workflow_option (
  workflow_id INTEGER NOT NULL PRIMARY KEY,
  time_zone TEXT NOT NULL DEFAULT ''
);
`

// WorkflowOptionTablePostgreSQL is the creation script of the workflow option table
// on PostgreSQL.
const WorkflowOptionTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_workflow_option (
  workflow_id INTEGER NOT NULL PRIMARY KEY,
  time_zone VARCHAR(64) NOT NULL DEFAULT ''
);
`

// workflowOptionOwnTable registers xxl_admin_workflow_option with schema init,
// upgrade and check (OwnTables).
var workflowOptionOwnTable = OwnTable{
	Name:       WorkflowOptionTable,
	Purpose:    "a workflow's settings beyond xxl_admin_workflow (time zone)",
	MySQL:      WorkflowOptionTableMySQL,
	SQLite:     WorkflowOptionTableSQLite,
	PostgreSQL: WorkflowOptionTablePostgreSQL,
}

// Workflow is one row of xxl_admin_workflow.
type Workflow struct {
	ID   int
	Name string
	// Graph is the JSON graph (scheduler/workflow.Graph).
	Graph string
	// Groups are the executor groups of the nodes' jobs at the last save, as shown;
	// access is judged by the jobs' groups now (xxl_admin_workflow_job).
	Groups          []int
	ScheduleType    string
	ScheduleConf    string
	MisfireStrategy string
	FailurePolicy   string
	// RunTimeout is in seconds; 0 means none.
	RunTimeout    int
	TriggerStatus int
	// TriggerNextTime, AddTime and UpdateTime are ms since 1970.
	TriggerNextTime int64
	Author          string
	AddTime         int64
	UpdateTime      int64
	// TimeZone is the IANA zone its CRON is evaluated in (xxl_admin_workflow_option);
	// "" is the admin's zone.
	TimeZone string
}

var workflowCols = []string{"id", "name", "graph", "group_ids", "schedule_type", "schedule_conf", "misfire_strategy",
	"failure_policy", "run_timeout", "trigger_status", "trigger_next_time", "author", "add_time", "update_time"}

// HasWorkflowTables reports whether the database has the workflow tables, and
// remembers whether it has the option table (WorkflowZonesEnabled): workflow reads
// carry the time zone only when it is there.
func (s *Store) HasWorkflowTables(ctx context.Context) (bool, error) {
	opts, err := tableExists(ctx, s.db, IsSQLite(s.db), WorkflowOptionTable)
	if err != nil {
		return false, err
	}
	s.workflowOptions.Store(opts)
	graphs, err := tableExists(ctx, s.db, IsSQLite(s.db), WorkflowGraphTable)
	if err != nil {
		return false, err
	}
	s.workflowGraphs.Store(graphs)
	return tableExists(ctx, s.db, IsSQLite(s.db), WorkflowNodeRunTable)
}

// WorkflowZonesEnabled reports whether the workflow option table was found
// (HasWorkflowTables) or created. Without it every workflow runs in the admin's zone
// and none can be given one.
func (s *Store) WorkflowZonesEnabled() bool { return s.workflowOptions.Load() }

// CreateWorkflowTables creates the workflow tables when they are missing, as `schema
// upgrade` does. It needs the CREATE privilege; no other table is touched.
func (s *Store) CreateWorkflowTables(ctx context.Context) error {
	if err := s.createOwnTable(ctx, workflowOwnTable); err != nil {
		return err
	}
	if err := s.createOwnTable(ctx, workflowGraphOwnTable); err != nil {
		return err
	}
	s.workflowGraphs.Store(true)
	if err := s.createOwnTable(ctx, workflowOptionOwnTable); err != nil {
		return err
	}
	s.workflowOptions.Store(true)
	return nil
}

// ErrNoWorkflowOptionTable refuses a workflow time zone where the table is missing.
var ErrNoWorkflowOptionTable = fmt.Errorf("table %s is missing; add it with `xxl-admin-go schema upgrade`", WorkflowOptionTable)

// workflowSelect selects every workflow column and its time zone: a correlated read by
// primary key, NULL for a workflow without a row, a constant without the table.
func (s *Store) workflowSelect() sq.SelectBuilder {
	zone := "''"
	if s.workflowOptions.Load() {
		zone = "(SELECT o.time_zone FROM " + WorkflowOptionTable + " o WHERE o.workflow_id = " + WorkflowTable + ".id)"
	}
	return s.sb.Select(append(append([]string{}, workflowCols...), zone)...).From(WorkflowTable)
}

// SaveWorkflowZone writes a workflow's time zone ("" removes its row); run it in the
// transaction that writes the workflow. Without the table, "" is a no-op and any other
// zone ErrNoWorkflowOptionTable.
func (s *Store) SaveWorkflowZone(ctx context.Context, id int, zone string) error {
	if !s.workflowOptions.Load() {
		if zone == "" {
			return nil
		}
		return ErrNoWorkflowOptionTable
	}
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.exec(ctx, s.sb.Delete(WorkflowOptionTable).Where(sq.Eq{"workflow_id": id})); err != nil {
			return fmt.Errorf("save time zone of workflow %d: %w", id, err)
		}
		if zone == "" {
			return nil
		}
		if _, err := s.exec(ctx, s.sb.Insert(WorkflowOptionTable).Columns("workflow_id", "time_zone").Values(id, zone)); err != nil {
			return fmt.Errorf("save time zone of workflow %d: %w", id, err)
		}
		return nil
	})
}

// InsertWorkflow stores a new workflow with its job rows and returns its id.
func (s *Store) InsertWorkflow(ctx context.Context, w Workflow) (int, error) {
	var id int64
	err := s.InTx(ctx, func(ctx context.Context) error {
		var err error
		id, err = s.insertID(ctx, s.sb.Insert(WorkflowTable).Columns(workflowCols[1:]...).
			Values(w.Name, w.Graph, joinIDs(w.Groups), w.ScheduleType, w.ScheduleConf, w.MisfireStrategy, w.FailurePolicy,
				w.RunTimeout, w.TriggerStatus, w.TriggerNextTime, w.Author, w.AddTime, w.UpdateTime))
		if err != nil {
			return err
		}
		return s.saveWorkflowJobs(ctx, int(id), w.Graph)
	})
	if err != nil {
		return 0, fmt.Errorf("insert workflow %q: %w", w.Name, err)
	}
	return int(id), nil
}

// UpdateWorkflow writes every field of w but its id, author and add time, and its job
// rows. It reports false when the workflow does not exist.
func (s *Store) UpdateWorkflow(ctx context.Context, w Workflow) (bool, error) {
	var n int64
	err := s.InTx(ctx, func(ctx context.Context) error {
		var err error
		n, err = affected(s.exec(ctx, s.sb.Update(WorkflowTable).SetMap(map[string]any{
			"name": w.Name, "graph": w.Graph, "group_ids": joinIDs(w.Groups), "schedule_type": w.ScheduleType,
			"schedule_conf": w.ScheduleConf, "misfire_strategy": w.MisfireStrategy, "failure_policy": w.FailurePolicy,
			"run_timeout": w.RunTimeout, "trigger_status": w.TriggerStatus, "trigger_next_time": w.TriggerNextTime,
			"update_time": w.UpdateTime,
		}).Where(sq.Eq{"id": w.ID})))
		if err != nil || n == 0 {
			return err
		}
		return s.saveWorkflowJobs(ctx, w.ID, w.Graph)
	})
	if err != nil {
		return false, fmt.Errorf("update workflow %d: %w", w.ID, err)
	}
	return n > 0, nil
}

// DeleteWorkflow removes a workflow definition with its time zone and job rows; its
// runs are ClearWorkflowRuns'. It reports false when there was none.
func (s *Store) DeleteWorkflow(ctx context.Context, id int) (bool, error) {
	var n int64
	err := s.InTx(ctx, func(ctx context.Context) error {
		if err := s.SaveWorkflowZone(ctx, id, ""); err != nil {
			return err
		}
		if s.workflowGraphs.Load() {
			if _, err := s.exec(ctx, s.sb.Delete(WorkflowJobTable).Where(sq.Eq{"workflow_id": id})); err != nil {
				return err
			}
		}
		var err error
		n, err = affected(s.exec(ctx, s.sb.Delete(WorkflowTable).Where(sq.Eq{"id": id})))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete workflow %d: %w", id, err)
	}
	return n > 0, nil
}

// LoadWorkflow reads a workflow; ErrNotFound when there is none.
func (s *Store) LoadWorkflow(ctx context.Context, id int) (Workflow, error) {
	ws, err := s.workflows(ctx, s.workflowSelect().Where(sq.Eq{"id": id}))
	if err != nil {
		return Workflow{}, err
	}
	if len(ws) == 0 {
		return Workflow{}, ErrNotFound
	}
	return ws[0], nil
}

// ListWorkflows returns a page of workflows whose name contains name (all when
// empty), newest first, and how many match. With groups not nil, only those whose
// nodes' jobs all exist and are in those groups now (filtered in SQL by the job rows:
// the count and the page's search read no graph; without the job table, none match).
func (s *Store) ListWorkflows(ctx context.Context, name string, groups []int, offset, limit int) ([]Workflow, int, error) {
	where := sq.And{}
	if name != "" {
		where = append(where, s.like("name", "%"+likeEscape(name)+"%"))
	}
	if groups != nil {
		if len(groups) == 0 || !s.workflowGraphs.Load() {
			return nil, 0, nil
		}
		where = append(where, inGroups(groups))
	}
	total, err := s.count(ctx, s.sb.Select("COUNT(*)").From(WorkflowTable).Where(where))
	if err != nil {
		return nil, 0, fmt.Errorf("count workflows: %w", err)
	}
	ws, err := s.workflows(ctx, s.workflowSelect().Where(where).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, err
	}
	return ws, total, nil
}

// DueWorkflows returns up to limit scheduled workflows whose next fire time is at or
// before upTo (ms), earliest first.
func (s *Store) DueWorkflows(ctx context.Context, upTo int64, limit int) ([]Workflow, error) {
	return s.workflows(ctx, s.workflowSelect().
		Where(sq.Eq{"trigger_status": 1}).Where(sq.And{sq.Gt{"trigger_next_time": 0}, sq.LtOrEq{"trigger_next_time": upTo}}).
		OrderBy("trigger_next_time ASC").Limit(uint64(limit)))
}

// MoveWorkflowNextTime sets a scheduled workflow's next fire time from old to next (0
// with status 0 stops it), only if it still is old and scheduled: of several admins
// that read the same due time, exactly one moves it, and only that one starts a run.
func (s *Store) MoveWorkflowNextTime(ctx context.Context, id int, old, next int64, status int) (bool, error) {
	n, err := affected(s.exec(ctx, s.sb.Update(WorkflowTable).Set("trigger_next_time", next).Set("trigger_status", status).
		Where(sq.Eq{"id": id, "trigger_next_time": old, "trigger_status": 1})))
	if err != nil {
		return false, fmt.Errorf("move next fire time of workflow %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *Store) workflows(ctx context.Context, b sq.SelectBuilder) ([]Workflow, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read workflows: %w", err)
	}
	defer rows.Close()
	var out []Workflow
	for rows.Next() {
		var w Workflow
		var groups string
		var zone sql.NullString
		if err := rows.Scan(&w.ID, &w.Name, &w.Graph, &groups, &w.ScheduleType, &w.ScheduleConf, &w.MisfireStrategy,
			&w.FailurePolicy, &w.RunTimeout, &w.TriggerStatus, &w.TriggerNextTime, &w.Author, &w.AddTime, &w.UpdateTime, &zone); err != nil {
			return nil, fmt.Errorf("scan workflow: %w", err)
		}
		w.Groups, w.TimeZone = splitIDs(groups), zone.String
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read workflows: %w", err)
	}
	return out, nil
}

// WorkflowRun is one row of xxl_admin_workflow_run. Times are ms since 1970.
type WorkflowRun struct {
	ID         int64
	WorkflowID int
	// Graph is the graph the run started with (read from its version); GraphID, when
	// inserting, the version (WorkflowGraphID) to link instead of storing a copy.
	Graph         string
	GraphID       int64
	FailurePolicy string
	State         string
	Input         string
	TriggerType   string
	FireTime      int64
	StartTime     int64
	EndTime       int64
	// Deadline ends the run when passed; 0 means none.
	Deadline int64
	// CheckTime is when the safety net looks at the running run again.
	CheckTime  int64
	Msg        string
	CreateUser string
}

var workflowRunCols = []string{"id", "workflow_id", "graph", "failure_policy", "state", "input", "trigger_type",
	"fire_time", "start_time", "end_time", "deadline", "check_time", "msg", "create_user"}

// runSelect selects every run column, the graph read from its version (runGraphCol),
// or "" with noGraph (a list).
func (s *Store) runSelect(noGraph bool) sq.SelectBuilder {
	cols := slices.Clone(workflowRunCols)
	cols[2] = s.runGraphCol()
	if noGraph {
		cols[2] = "''"
	}
	return s.sb.Select(cols...).From(WorkflowRunTable)
}

// NodeRun is one row of xxl_admin_workflow_node_run. Times are ms since 1970.
type NodeRun struct {
	ID    int64
	RunID int64
	Node  string
	JobID int
	State string
	// Attempt counts the node's fires (1 for the first); LogID is the latest's log row.
	Attempt   int
	LogID     int64
	Param     string
	Output    string
	StartTime int64
	EndTime   int64
	Msg       string
}

var nodeRunCols = []string{"id", "run_id", "node", "job_id", "state", "attempt", "log_id", "param", "output",
	"start_time", "end_time", "msg"}

// InsertWorkflowRun stores a run and its node rows in one transaction (the caller's,
// when there is one) and returns the run's id; the nodes' RunID is set, not their ID
// (an advance reads the rows). The nodes go in one multi-row statement. A run with a
// GraphID links to that graph version and stores no copy of its own.
func (s *Store) InsertWorkflowRun(ctx context.Context, r WorkflowRun, nodes []NodeRun) (int64, error) {
	var id int64
	err := s.InTx(ctx, func(ctx context.Context) error {
		graph := r.Graph
		if r.GraphID > 0 {
			graph = ""
		}
		var err error
		id, err = s.insertID(ctx, s.sb.Insert(WorkflowRunTable).Columns(workflowRunCols[1:]...).
			Values(r.WorkflowID, graph, r.FailurePolicy, r.State, r.Input, r.TriggerType, r.FireTime, r.StartTime,
				r.EndTime, r.Deadline, r.CheckTime, truncateRunes(r.Msg, 1024), r.CreateUser))
		if err != nil {
			return fmt.Errorf("insert workflow run of workflow %d: %w", r.WorkflowID, err)
		}
		if r.GraphID > 0 {
			if _, err := s.exec(ctx, s.sb.Insert(WorkflowRunGraphTable).Columns("run_id", "graph_id").Values(id, r.GraphID)); err != nil {
				return fmt.Errorf("link workflow run %d to its graph: %w", id, err)
			}
		}
		if len(nodes) == 0 {
			return nil
		}
		b := s.sb.Insert(WorkflowNodeRunTable).Columns(nodeRunCols[1:]...)
		for i := range nodes {
			n := &nodes[i]
			n.RunID = id
			b = b.Values(id, n.Node, n.JobID, n.State, n.Attempt, n.LogID, n.Param, n.Output, n.StartTime, n.EndTime,
				truncateRunes(n.Msg, 1024))
		}
		if _, err := s.exec(ctx, b); err != nil {
			return fmt.Errorf("insert the nodes of workflow run %d: %w", id, err)
		}
		return nil
	})
	return id, err
}

// LockWorkflowRun reads a run and locks its row until the context's transaction ends
// (on SQLite the transaction holds the write lock already); ErrNotFound when there is
// none. Every change to a run's state or its nodes is made under this lock.
func (s *Store) LockWorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	rs, err := s.LockWorkflowRuns(ctx, []int64{id})
	if err != nil {
		return WorkflowRun{}, err
	}
	if len(rs) == 0 {
		return WorkflowRun{}, ErrNotFound
	}
	return rs[0], nil
}

// LockWorkflowRuns is LockWorkflowRun for several runs in one statement: the rows are
// locked in id order, as every batch of advances locks them, so two batches that share
// runs wait on each other rather than deadlock. Runs that do not exist are missing
// from the answer, which is in id order.
func (s *Store) LockWorkflowRuns(ctx context.Context, ids []int64) ([]WorkflowRun, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// The locking read names the run table alone: a subquery in it (the graph of the
	// run's version) would be a consistent read, whose snapshot, taken before the lock
	// is granted, the advance's later reads of the node rows would then see, missing
	// what the transaction it waited for committed (a node dispatched twice). The
	// graphs of linked versions are read once the lock is held.
	b := s.runSelect(true).Where(sq.Eq{"id": ids}).OrderBy("id ASC")
	if suffix := s.d.LockSuffix(); suffix != "" {
		b = b.Suffix(suffix)
	}
	rs, err := s.workflowRuns(ctx, b)
	if err != nil || len(rs) == 0 {
		return rs, err
	}
	graphs, err := s.runGraphs(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].Graph = graphs[rs[i].ID]
	}
	return rs, nil
}

// runGraphs reads the runs' graphs (each its version's, or its own copy) in one
// statement, after their row locks.
func (s *Store) runGraphs(ctx context.Context, ids []int64) (map[int64]string, error) {
	rows, err := s.query(ctx, s.sb.Select("id", s.runGraphCol()).From(WorkflowRunTable).Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("read the graphs of workflow runs: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]string, len(ids))
	for rows.Next() {
		var id int64
		var g sql.NullString
		if err := rows.Scan(&id, &g); err != nil {
			return nil, fmt.Errorf("read the graphs of workflow runs: %w", err)
		}
		out[id] = g.String
	}
	return out, rows.Err()
}

// LoadWorkflowRun reads a run; ErrNotFound when there is none.
func (s *Store) LoadWorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	rs, err := s.workflowRuns(ctx, s.runSelect(false).Where(sq.Eq{"id": id}))
	if err != nil {
		return WorkflowRun{}, err
	}
	if len(rs) == 0 {
		return WorkflowRun{}, ErrNotFound
	}
	return rs[0], nil
}

// ListWorkflowRuns returns a page of a workflow's runs, newest first, and how many
// there are; workflowID 0 lists the runs of every workflow. With groups not nil, only
// the runs whose nodes' jobs all exist and are in those groups now. The page carries
// no graph (a run's is read with LoadWorkflowRun).
func (s *Store) ListWorkflowRuns(ctx context.Context, workflowID int, groups []int, offset, limit int) ([]WorkflowRun, int, error) {
	where := sq.And{}
	if workflowID > 0 {
		where = append(where, sq.Eq{"workflow_id": workflowID})
	}
	if groups != nil {
		if len(groups) == 0 {
			return nil, 0, nil
		}
		where = append(where, runsInGroups(groups))
	}
	total, err := s.count(ctx, s.sb.Select("COUNT(*)").From(WorkflowRunTable).Where(where))
	if err != nil {
		return nil, 0, fmt.Errorf("count workflow runs: %w", err)
	}
	rs, err := s.workflowRuns(ctx, s.runSelect(true).Where(where).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, err
	}
	return rs, total, nil
}

// runsInGroups keeps the runs none of whose nodes is of a job that is gone or in a
// group not among groups (not empty): read through the node table's (run_id, node)
// key and the jobs' primary key.
func runsInGroups(groups []int) sq.Sqlizer {
	args := make([]any, len(groups))
	for i, g := range groups {
		args[i] = g
	}
	return sq.Expr("NOT EXISTS (SELECT 1 FROM "+WorkflowNodeRunTable+" n LEFT JOIN xxl_job_info j ON j.id = n.job_id"+
		" WHERE n.run_id = "+WorkflowRunTable+".id AND (j.id IS NULL OR j.job_group NOT IN ("+sq.Placeholders(len(groups))+")))", args...)
}

// UpdateWorkflowRuns is UpdateWorkflowRun for several runs, in one statement (of at
// most MaxBatchRows rows).
func (s *Store) UpdateWorkflowRuns(ctx context.Context, runs []WorkflowRun) error {
	if len(runs) == 1 {
		return s.UpdateWorkflowRun(ctx, runs[0])
	}
	return Chunks(len(runs), MaxBatchRows, func(lo, hi int) error {
		part := runs[lo:hi]
		ids := make([]int64, len(part))
		for i, r := range part {
			ids[i] = r.ID
		}
		if _, err := s.exec(ctx, s.sb.Update(WorkflowRunTable).
			Set("state", caseByID(s.d, ids, func(i int) any { return part[i].State })).
			Set("end_time", caseByID(s.d, ids, func(i int) any { return part[i].EndTime })).
			Set("deadline", caseByID(s.d, ids, func(i int) any { return part[i].Deadline })).
			Set("check_time", caseByID(s.d, ids, func(i int) any { return part[i].CheckTime })).
			Set("msg", caseByID(s.d, ids, func(i int) any { return truncateRunes(part[i].Msg, 1024) })).
			Where(sq.Eq{"id": ids})); err != nil {
			return fmt.Errorf("update %d workflow runs: %w", len(part), err)
		}
		return nil
	})
}

// UpdateWorkflowRun writes a run's state, end time, deadline, check time and message
// (under LockWorkflowRun).
func (s *Store) UpdateWorkflowRun(ctx context.Context, r WorkflowRun) error {
	if _, err := s.exec(ctx, s.sb.Update(WorkflowRunTable).SetMap(map[string]any{
		"state": r.State, "end_time": r.EndTime, "deadline": r.Deadline, "check_time": r.CheckTime,
		"msg": truncateRunes(r.Msg, 1024),
	}).Where(sq.Eq{"id": r.ID})); err != nil {
		return fmt.Errorf("update workflow run %d: %w", r.ID, err)
	}
	return nil
}

// DueWorkflowRuns returns up to limit running runs whose check time is at or before
// now (ms), the longest unchecked first: the safety net's work.
func (s *Store) DueWorkflowRuns(ctx context.Context, now int64, limit int) ([]int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From(WorkflowRunTable).
		Where(sq.Eq{"state": WorkflowRunning}).Where(sq.LtOrEq{"check_time": now}).
		OrderBy("check_time ASC").Limit(uint64(limit))))
	if err != nil {
		return nil, fmt.Errorf("find workflow runs to check: %w", err)
	}
	return ids, nil
}

func (s *Store) workflowRuns(ctx context.Context, b sq.SelectBuilder) ([]WorkflowRun, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read workflow runs: %w", err)
	}
	defer rows.Close()
	var out []WorkflowRun
	for rows.Next() {
		var r WorkflowRun
		var input sql.NullString
		if err := rows.Scan(&r.ID, &r.WorkflowID, &r.Graph, &r.FailurePolicy, &r.State, &input, &r.TriggerType,
			&r.FireTime, &r.StartTime, &r.EndTime, &r.Deadline, &r.CheckTime, &r.Msg, &r.CreateUser); err != nil {
			return nil, fmt.Errorf("scan workflow run: %w", err)
		}
		r.Input = input.String
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read workflow runs: %w", err)
	}
	return out, nil
}

// WorkflowNodeRuns reads the nodes of a run, in insertion order.
func (s *Store) WorkflowNodeRuns(ctx context.Context, runID int64) ([]NodeRun, error) {
	rows, err := s.query(ctx, s.sb.Select(nodeRunCols...).From(WorkflowNodeRunTable).Where(sq.Eq{"run_id": runID}).OrderBy("id ASC"))
	if err != nil {
		return nil, fmt.Errorf("read nodes of workflow run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []NodeRun
	for rows.Next() {
		var n NodeRun
		var param, output sql.NullString
		if err := rows.Scan(&n.ID, &n.RunID, &n.Node, &n.JobID, &n.State, &n.Attempt, &n.LogID, &param, &output,
			&n.StartTime, &n.EndTime, &n.Msg); err != nil {
			return nil, fmt.Errorf("scan node of workflow run %d: %w", runID, err)
		}
		n.Param, n.Output = param.String, output.String
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read nodes of workflow run %d: %w", runID, err)
	}
	return out, nil
}

// WorkflowNodeRunsWithResults is WorkflowNodeRuns with the log outcome of each running
// node, read in the same statement (an advance's read of its run under the lock):
// results has an entry per running node whose log row exists.
func (s *Store) WorkflowNodeRunsWithResults(ctx context.Context, runID int64) ([]NodeRun, map[int64]LogResult, error) {
	nodes, results, err := s.WorkflowNodeRunsOfRuns(ctx, []int64{runID})
	return nodes[runID], results, err
}

// WorkflowNodeRunsOfRuns is WorkflowNodeRunsWithResults for several runs in one
// statement (a batch of advances): the nodes by run, each run's in insertion order.
func (s *Store) WorkflowNodeRunsOfRuns(ctx context.Context, runIDs []int64) (map[int64][]NodeRun, map[int64]LogResult, error) {
	out := make(map[int64][]NodeRun, len(runIDs))
	results := map[int64]LogResult{}
	if len(runIDs) == 0 {
		return out, results, nil
	}
	cols := make([]string, 0, len(nodeRunCols)+6)
	for _, c := range nodeRunCols {
		cols = append(cols, "n."+c)
	}
	cols = append(cols, "l.id", "l.trigger_time", "l.trigger_code", "l.trigger_msg", "l.handle_code", "l.handle_msg")
	rows, err := s.query(ctx, s.sb.Select(cols...).From(WorkflowNodeRunTable+" n").
		LeftJoin("xxl_job_log l ON l.id = n.log_id AND n.state = ?", WorkflowRunning).
		Where(sq.Eq{"n.run_id": runIDs}).OrderBy("n.id ASC"))
	if err != nil {
		return nil, nil, fmt.Errorf("read nodes of %d workflow runs: %w", len(runIDs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var n NodeRun
		var param, output, tmsg, hmsg sql.NullString
		var lid, tcode, hcode sql.NullInt64
		var tt sql.NullTime
		if err := rows.Scan(&n.ID, &n.RunID, &n.Node, &n.JobID, &n.State, &n.Attempt, &n.LogID, &param, &output,
			&n.StartTime, &n.EndTime, &n.Msg, &lid, &tt, &tcode, &tmsg, &hcode, &hmsg); err != nil {
			return nil, nil, fmt.Errorf("scan node of workflow runs: %w", err)
		}
		n.Param, n.Output = param.String, output.String
		out[n.RunID] = append(out[n.RunID], n)
		if lid.Valid {
			results[lid.Int64] = LogResult{ID: lid.Int64, TriggerTime: tt.Time, TriggerCode: int(tcode.Int64), TriggerMsg: tmsg.String,
				HandleCode: int(hcode.Int64), HandleMsg: hmsg.String}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read nodes of %d workflow runs: %w", len(runIDs), err)
	}
	return out, results, nil
}

// UpdateNodeRun writes a node's state, attempt, log id, parameter, output, times and
// message (under LockWorkflowRun).
func (s *Store) UpdateNodeRun(ctx context.Context, n NodeRun) error {
	if _, err := s.exec(ctx, s.sb.Update(WorkflowNodeRunTable).SetMap(map[string]any{
		"state": n.State, "attempt": n.Attempt, "log_id": n.LogID, "param": n.Param, "output": n.Output,
		"start_time": n.StartTime, "end_time": n.EndTime, "msg": truncateRunes(n.Msg, 1024),
	}).Where(sq.Eq{"id": n.ID})); err != nil {
		return fmt.Errorf("update node %q of workflow run %d: %w", n.Node, n.RunID, err)
	}
	return nil
}

// UpdateNodeRuns is UpdateNodeRun for several nodes (of any runs, each under its run's
// lock), in one statement (of at most MaxBatchRows rows).
func (s *Store) UpdateNodeRuns(ctx context.Context, nodes []NodeRun) error {
	if len(nodes) == 1 {
		return s.UpdateNodeRun(ctx, nodes[0])
	}
	return Chunks(len(nodes), MaxBatchRows, func(lo, hi int) error {
		part := nodes[lo:hi]
		ids := make([]int64, len(part))
		for i, n := range part {
			ids[i] = n.ID
		}
		if _, err := s.exec(ctx, s.sb.Update(WorkflowNodeRunTable).
			Set("state", caseByID(s.d, ids, func(i int) any { return part[i].State })).
			Set("attempt", caseByID(s.d, ids, func(i int) any { return part[i].Attempt })).
			Set("log_id", caseByID(s.d, ids, func(i int) any { return part[i].LogID })).
			Set("param", caseByID(s.d, ids, func(i int) any { return part[i].Param })).
			Set("output", caseByID(s.d, ids, func(i int) any { return part[i].Output })).
			Set("start_time", caseByID(s.d, ids, func(i int) any { return part[i].StartTime })).
			Set("end_time", caseByID(s.d, ids, func(i int) any { return part[i].EndTime })).
			Set("msg", caseByID(s.d, ids, func(i int) any { return truncateRunes(part[i].Msg, 1024) })).
			Where(sq.Eq{"id": ids})); err != nil {
			return fmt.Errorf("update %d workflow nodes: %w", len(part), err)
		}
		return nil
	})
}

// WorkflowRunsOfLogs returns the runs whose running nodes are on the given log rows,
// each once: the callback path's way from stored results to the runs they unblock.
func (s *Store) WorkflowRunsOfLogs(ctx context.Context, logIDs []int64) ([]int64, error) {
	if len(logIDs) == 0 {
		return nil, nil
	}
	ids, err := ids64(s.query(ctx, s.sb.Select("DISTINCT run_id").From(WorkflowNodeRunTable).
		Where(sq.Eq{"log_id": logIDs, "state": WorkflowRunning})))
	if err != nil {
		return nil, fmt.Errorf("find workflow runs of logs: %w", err)
	}
	return ids, nil
}

// LogResult is what a workflow reads of a node's log row.
type LogResult struct {
	ID          int64
	TriggerTime time.Time
	TriggerCode int
	TriggerMsg  string
	HandleCode  int
	HandleMsg   string
}

// LogResults reads the trigger and handle outcome of the logs among ids (deleted ones
// are missing from the answer).
func (s *Store) LogResults(ctx context.Context, ids []int64) (map[int64]LogResult, error) {
	out := make(map[int64]LogResult, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select("id", "trigger_time", "trigger_code", "trigger_msg", "handle_code", "handle_msg").
		From("xxl_job_log").Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("read log results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l LogResult
		var tt sql.NullTime
		var tmsg, hmsg sql.NullString
		if err := rows.Scan(&l.ID, &tt, &l.TriggerCode, &tmsg, &l.HandleCode, &hmsg); err != nil {
			return nil, fmt.Errorf("read log results: %w", err)
		}
		l.TriggerTime, l.TriggerMsg, l.HandleMsg = tt.Time, tmsg.String, hmsg.String
		out[l.ID] = l
	}
	return out, rows.Err()
}

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
