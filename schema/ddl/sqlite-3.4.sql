-- xxl-admin-go: the tables of the xxl-job 3.4.x layout ("S4") for the embedded SQLite
-- database, written for this project. Same tables, columns, defaults, keys and seed rows
-- as mysql-3.4.sql, in SQLite's terms:
--   * ids are INTEGER PRIMARY KEY AUTOINCREMENT, so an id is never handed out twice,
--     even after the newest row was deleted (as with InnoDB's AUTO_INCREMENT);
--   * text columns compare with NOCASE, as MySQL's utf8mb4_unicode_ci does for ASCII
--     (user names, app names and registry keys are unique regardless of case);
--   * DATETIME columns hold UTC text 'YYYY-MM-DD HH:MM:SS' (see schema.OpenSQLite);
--     the seed rows' 14:21:31 is upstream's 22:21:31 at +08:00.

CREATE TABLE xxl_job_info (
  id                        INTEGER PRIMARY KEY AUTOINCREMENT,
  job_group                 INT NOT NULL,
  job_desc                  VARCHAR(255) NOT NULL COLLATE NOCASE,
  add_time                  DATETIME DEFAULT NULL,
  update_time               DATETIME DEFAULT NULL,
  author                    VARCHAR(64) DEFAULT NULL COLLATE NOCASE,
  alarm_email               VARCHAR(255) DEFAULT NULL COLLATE NOCASE,
  schedule_type             VARCHAR(50) NOT NULL DEFAULT 'NONE' COLLATE NOCASE,
  schedule_conf             VARCHAR(128) DEFAULT NULL COLLATE NOCASE,
  misfire_strategy          VARCHAR(50) NOT NULL DEFAULT 'DO_NOTHING' COLLATE NOCASE,
  executor_route_strategy   VARCHAR(50) DEFAULT NULL COLLATE NOCASE,
  executor_handler          VARCHAR(255) DEFAULT NULL COLLATE NOCASE,
  executor_param            TEXT COLLATE NOCASE,
  executor_block_strategy   VARCHAR(50) DEFAULT NULL COLLATE NOCASE,
  executor_timeout          INT NOT NULL DEFAULT 0,
  executor_fail_retry_count INT NOT NULL DEFAULT 0,
  glue_type                 VARCHAR(50) NOT NULL COLLATE NOCASE,
  glue_source               MEDIUMTEXT COLLATE NOCASE,
  glue_remark               VARCHAR(128) DEFAULT NULL COLLATE NOCASE,
  glue_updatetime           DATETIME DEFAULT NULL,
  child_jobid               VARCHAR(255) DEFAULT NULL COLLATE NOCASE,
  trigger_status            TINYINT NOT NULL DEFAULT 0,
  trigger_last_time         BIGINT NOT NULL DEFAULT 0,
  trigger_next_time         BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE xxl_job_log (
  id                        INTEGER PRIMARY KEY AUTOINCREMENT,
  job_group                 INT NOT NULL,
  job_id                    INT NOT NULL,
  executor_address          VARCHAR(255) DEFAULT NULL COLLATE NOCASE,
  executor_handler          VARCHAR(255) DEFAULT NULL COLLATE NOCASE,
  executor_param            TEXT COLLATE NOCASE,
  executor_sharding_param   VARCHAR(20) DEFAULT NULL COLLATE NOCASE,
  executor_fail_retry_count INT NOT NULL DEFAULT 0,
  trigger_time              DATETIME DEFAULT NULL,
  trigger_code              INT NOT NULL,
  trigger_msg               TEXT COLLATE NOCASE,
  handle_time               DATETIME DEFAULT NULL,
  handle_code               INT NOT NULL,
  handle_msg                TEXT COLLATE NOCASE,
  alarm_status              TINYINT NOT NULL DEFAULT 0
);
CREATE INDEX I_trigger_time ON xxl_job_log (trigger_time);
CREATE INDEX I_handle_code ON xxl_job_log (handle_code);
CREATE INDEX I_jobgroup ON xxl_job_log (job_group);
CREATE INDEX I_jobid ON xxl_job_log (job_id);

CREATE TABLE xxl_job_log_report (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  trigger_day   DATETIME DEFAULT NULL,
  running_count INT NOT NULL DEFAULT 0,
  suc_count     INT NOT NULL DEFAULT 0,
  fail_count    INT NOT NULL DEFAULT 0,
  update_time   DATETIME DEFAULT NULL
);
CREATE UNIQUE INDEX i_trigger_day ON xxl_job_log_report (trigger_day);

CREATE TABLE xxl_job_logglue (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id      INT NOT NULL,
  glue_type   VARCHAR(50) DEFAULT NULL COLLATE NOCASE,
  glue_source MEDIUMTEXT COLLATE NOCASE,
  glue_remark VARCHAR(128) NOT NULL COLLATE NOCASE,
  add_time    DATETIME DEFAULT NULL,
  update_time DATETIME DEFAULT NULL
);

CREATE TABLE xxl_job_registry (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  registry_group VARCHAR(50) NOT NULL COLLATE NOCASE,
  registry_key   VARCHAR(255) NOT NULL COLLATE NOCASE,
  registry_value VARCHAR(255) NOT NULL COLLATE NOCASE,
  update_time    DATETIME DEFAULT NULL
);
CREATE UNIQUE INDEX i_g_k_v ON xxl_job_registry (registry_group, registry_key, registry_value);

CREATE TABLE xxl_job_group (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  app_name     VARCHAR(64) NOT NULL COLLATE NOCASE,
  title        VARCHAR(64) NOT NULL COLLATE NOCASE,
  address_type TINYINT NOT NULL DEFAULT 0,
  address_list TEXT COLLATE NOCASE,
  update_time  DATETIME DEFAULT NULL
);

CREATE TABLE xxl_job_user (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  username   VARCHAR(50) NOT NULL COLLATE NOCASE,
  password   VARCHAR(100) NOT NULL COLLATE NOCASE,
  token      VARCHAR(100) DEFAULT NULL COLLATE NOCASE,
  role       TINYINT NOT NULL,
  permission VARCHAR(255) DEFAULT NULL COLLATE NOCASE
);
CREATE UNIQUE INDEX i_username ON xxl_job_user (username);

CREATE TABLE xxl_job_lock (
  lock_name VARCHAR(50) NOT NULL COLLATE NOCASE,
  PRIMARY KEY (lock_name)
);

-- Seed rows: one sample executor group, one stopped sample job, the admin user
-- (password 123456 as SHA-256 hex, the 3.2+ format) and the scheduler's lock row.
INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time)
  VALUES (1, 'xxl-job-executor-sample', '通用执行器Sample', 0, NULL, '2018-11-03 14:21:31');
INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, alarm_email,
    schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler,
    executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count,
    glue_type, glue_source, glue_remark, glue_updatetime, child_jobid)
  VALUES (1, 1, '示例任务01', '2018-11-03 14:21:31', '2018-11-03 14:21:31', 'XXL', '',
    'CRON', '0 0 0 * * ? *', 'DO_NOTHING', 'FIRST', 'demoJobHandler',
    '', 'SERIAL_EXECUTION', 0, 0,
    'BEAN', '', 'GLUE代码初始化', '2018-11-03 14:21:31', '');
INSERT INTO xxl_job_user (id, username, password, role, permission)
  VALUES (1, 'admin', '8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92', 1, NULL);
INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock');
