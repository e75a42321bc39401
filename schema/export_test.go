package schema

import "context"

// ListLogsSQL is the page query of ListLogs, for the index-plan test.
func ListLogsSQL(s *Store, f LogFilter, offset, limit int) (string, []any, error) {
	s.detectLogIndexes(context.Background())
	return s.listLogsQuery(f, offset, limit).ToSql()
}
