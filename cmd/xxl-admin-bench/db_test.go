package main

import (
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// Seeded times are the wall clock of the admin's zone, whatever the zone of the process.
func TestSQLTimeInAdminZone(t *testing.T) {
	t.Parallel()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	require.NoError(t, err)
	b := &benchDB{loc: shanghai}
	at := time.Date(2026, 1, 2, 20, 30, 5, 900_000_000, time.UTC)
	require.Equal(t, "'2026-01-03 04:30:05'", b.sqlTime(at))
}

func TestAdminZone(t *testing.T) {
	t.Parallel()
	c, err := mysql.ParseDSN("root@tcp(127.0.0.1:3306)/")
	require.NoError(t, err)
	require.Equal(t, time.Local, adminZone(c), "no loc: the machine's zone")
	c, err = mysql.ParseDSN("root@tcp(127.0.0.1:3306)/?loc=Asia%2FShanghai")
	require.NoError(t, err)
	require.Equal(t, "Asia/Shanghai", adminZone(c).String())
}
