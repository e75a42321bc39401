package schema

// ListLogsSQL is the page query of ListLogs, for the index-plan test.
func ListLogsSQL(s *Store, f LogFilter, offset, limit int) (string, []any, error) {
	return s.listLogsQuery(f, offset, limit).ToSql()
}
