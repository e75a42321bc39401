-- xxl-admin-go: tables of the xxl-job 3.5 layout ("S5"), written for this project.
-- Column names, types and index names are compatibility facts (schema.md §3.5, §4.2):
-- against the 3.4 layout, xxl_job_group.title and xxl_job_info.job_desc are named
-- `name`, each executor group carries the access_token its executors authenticate
-- with, app names are unique (i_app_name), and the log's index names are lower case.
-- A Java admin of 3.5 can run on a database created from this file; no admin of 3.4.2
-- or older can (the renamed columns).

CREATE TABLE xxl_job_info (
  id                        INT(11) NOT NULL AUTO_INCREMENT,
  job_group                 INT(11) NOT NULL,
  name                      VARCHAR(255) NOT NULL,
  add_time                  DATETIME DEFAULT NULL,
  update_time               DATETIME DEFAULT NULL,
  author                    VARCHAR(64) DEFAULT NULL,
  alarm_email               VARCHAR(255) DEFAULT NULL,
  schedule_type             VARCHAR(50) NOT NULL DEFAULT 'NONE',
  schedule_conf             VARCHAR(128) DEFAULT NULL,
  misfire_strategy          VARCHAR(50) NOT NULL DEFAULT 'DO_NOTHING',
  executor_route_strategy   VARCHAR(50) DEFAULT NULL,
  executor_handler          VARCHAR(255) DEFAULT NULL,
  executor_param            TEXT,
  executor_block_strategy   VARCHAR(50) DEFAULT NULL,
  executor_timeout          INT(11) NOT NULL DEFAULT '0',
  executor_fail_retry_count INT(11) NOT NULL DEFAULT '0',
  glue_type                 VARCHAR(50) NOT NULL,
  glue_source               MEDIUMTEXT,
  glue_remark               VARCHAR(128) DEFAULT NULL,
  glue_updatetime           DATETIME DEFAULT NULL,
  child_jobid               VARCHAR(255) DEFAULT NULL,
  trigger_status            TINYINT(4) NOT NULL DEFAULT '0',
  trigger_last_time         BIGINT(13) NOT NULL DEFAULT '0',
  trigger_next_time         BIGINT(13) NOT NULL DEFAULT '0',
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_log (
  id                        BIGINT(20) NOT NULL AUTO_INCREMENT,
  job_group                 INT(11) NOT NULL,
  job_id                    INT(11) NOT NULL,
  executor_address          VARCHAR(255) DEFAULT NULL,
  executor_handler          VARCHAR(255) DEFAULT NULL,
  executor_param            TEXT,
  executor_sharding_param   VARCHAR(20) DEFAULT NULL,
  executor_fail_retry_count INT(11) NOT NULL DEFAULT '0',
  trigger_time              DATETIME DEFAULT NULL,
  trigger_code              INT(11) NOT NULL,
  trigger_msg               TEXT,
  handle_time               DATETIME DEFAULT NULL,
  handle_code               INT(11) NOT NULL,
  handle_msg                TEXT,
  alarm_status              TINYINT(4) NOT NULL DEFAULT '0',
  PRIMARY KEY (id),
  KEY i_trigger_time (trigger_time),
  KEY i_handle_code (handle_code),
  KEY i_job_group (job_group),
  KEY i_job_id (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_log_report (
  id            INT(11) NOT NULL AUTO_INCREMENT,
  trigger_day   DATETIME DEFAULT NULL,
  running_count INT(11) NOT NULL DEFAULT '0',
  suc_count     INT(11) NOT NULL DEFAULT '0',
  fail_count    INT(11) NOT NULL DEFAULT '0',
  update_time   DATETIME DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY i_trigger_day (trigger_day) USING BTREE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_logglue (
  id          INT(11) NOT NULL AUTO_INCREMENT,
  job_id      INT(11) NOT NULL,
  glue_type   VARCHAR(50) DEFAULT NULL,
  glue_source MEDIUMTEXT,
  glue_remark VARCHAR(128) NOT NULL,
  add_time    DATETIME DEFAULT NULL,
  update_time DATETIME DEFAULT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_registry (
  id             BIGINT(20) NOT NULL AUTO_INCREMENT,
  registry_group VARCHAR(50) NOT NULL,
  registry_key   VARCHAR(255) NOT NULL,
  registry_value VARCHAR(255) NOT NULL,
  update_time    DATETIME DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY i_g_k_v (registry_group, registry_key, registry_value) USING BTREE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_group (
  id           INT(11) NOT NULL AUTO_INCREMENT,
  app_name     VARCHAR(64) NOT NULL,
  name         VARCHAR(64) NOT NULL,
  address_type TINYINT(4) NOT NULL DEFAULT '0',
  address_list TEXT,
  access_token VARCHAR(255) DEFAULT NULL,
  update_time  DATETIME DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY i_app_name (app_name) USING BTREE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_user (
  id         INT(11) NOT NULL AUTO_INCREMENT,
  username   VARCHAR(50) NOT NULL,
  password   VARCHAR(100) NOT NULL,
  token      VARCHAR(100) DEFAULT NULL,
  role       TINYINT(4) NOT NULL,
  permission VARCHAR(255) DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY i_username (username) USING BTREE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE xxl_job_lock (
  lock_name VARCHAR(50) NOT NULL,
  PRIMARY KEY (lock_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Seed rows: one sample executor group with the sample executor's access token, one
-- stopped sample job, the admin user (password 123456 as SHA-256 hex) and the
-- scheduler's lock row.
INSERT INTO xxl_job_group (id, app_name, name, address_type, address_list, access_token, update_time)
  VALUES (1, 'xxl-job-executor-sample', '通用执行器Sample', 0, NULL, 'default_token', '2018-11-03 22:21:31');
INSERT INTO xxl_job_info (id, job_group, name, add_time, update_time, author, alarm_email,
    schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler,
    executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count,
    glue_type, glue_source, glue_remark, glue_updatetime, child_jobid)
  VALUES (1, 1, '示例任务01', '2018-11-03 22:21:31', '2018-11-03 22:21:31', 'XXL', '',
    'CRON', '0 0 0 * * ? *', 'DO_NOTHING', 'FIRST', 'demoJobHandler',
    '', 'SERIAL_EXECUTION', 0, 0,
    'BEAN', '', 'GLUE代码初始化', '2018-11-03 22:21:31', '');
INSERT INTO xxl_job_user (id, username, password, role, permission)
  VALUES (1, 'admin', '8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92', 1, NULL);
INSERT INTO xxl_job_lock (lock_name) VALUES ('schedule_lock');
