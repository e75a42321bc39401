package schema

import "testing"

func TestNumberPlaceholders(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"SELECT 1":                             "SELECT 1",
		"SELECT $1":                            "SELECT $1",
		"UPDATE t SET a = ? WHERE id IN (?,?)": "UPDATE t SET a = $1 WHERE id IN ($2,$3)",
		"SELECT '?', 'it''s ?', \"a?b\", ? FROM t":      "SELECT '?', 'it''s ?', \"a?b\", $1 FROM t",
		"SELECT ? -- why?\n, ? /* what? */ , ?":         "SELECT $1 -- why?\n, $2 /* what? */ , $3",
		"SELECT 'unterminated ?":                        "SELECT 'unterminated ?",
		"SELECT CAST(? AS BIGINT) + ? FROM t WHERE x=?": "SELECT CAST($1 AS BIGINT) + $2 FROM t WHERE x=$3",
	} {
		if got := numberPlaceholders(in); got != want {
			t.Errorf("numberPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}
