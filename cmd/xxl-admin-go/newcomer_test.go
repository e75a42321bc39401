package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The database mistakes of a first start each say what to do: a database not created
// yet names `schema init`, a password never given says the default was sent, and an
// address that is not a JDBC URL names the forms expected.
func TestDatabaseMistakesSayWhatToDo(t *testing.T) {
	t.Parallel()
	db := schematest.NewEmpty(t)
	ctx := context.Background()

	t.Run("unknown database", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(jdbcArgs(db, db.Name+"_never_made"), "--server.port=0"), nil, &out, &errOut, nil)
		require.ErrorContains(t, err, "Unknown database")
		require.ErrorContains(t, err, "the database "+db.Name+"_never_made does not exist: run `xxl-admin-go schema init` with the same settings, which creates it and its tables")
	})

	t.Run("unknown database on PostgreSQL", func(t *testing.T) {
		pg, _ := schematest.NewPostgres(t)
		var out, errOut bytes.Buffer
		args := []string{fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/xxl_newcomer_never_made?serverTimezone=UTC&sslmode=disable", pg.Config.Host, pg.Config.Port),
			"--spring.datasource.username=" + pg.Config.User, "--spring.datasource.password=" + pg.Config.Password,
			"--server.port=0"} // the port is opened first: any free one
		err := run(ctx, args, nil, &out, &errOut, nil)
		require.ErrorContains(t, err, "the database xxl_newcomer_never_made does not exist: run `xxl-admin-go schema init`")
	})

	t.Run("no password given", func(t *testing.T) {
		var out, errOut bytes.Buffer
		args := []string{"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=UTC", "--server.port=0"}
		err := run(ctx, args, nil, &out, &errOut, nil)
		require.ErrorContains(t, err, "Access denied")
		require.ErrorContains(t, err, `no spring.datasource.password was given, so upstream's default "root_pwd" was sent`)
		require.Contains(t, errOut.String(), `spring.datasource.password is not set, so upstream's default password \"root_pwd\" is sent to the database`)
	})

	t.Run("not a JDBC URL", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(ctx, []string{"--spring.datasource.url=mysql://" + db.Config.Addr + "/" + db.Name}, nil, &out, &errOut, nil)
		require.ErrorContains(t, err, "spring.datasource.url")
		require.ErrorContains(t, err, "is a mysql:// URL, not a JDBC URL: write it as jdbc:mysql://host:3306/xxl_job?serverTimezone=UTC (MySQL, MariaDB), jdbc:postgresql://host:5432/xxl_job (PostgreSQL)")
	})
}

// A port in use stops the start with the port named, before anything is created: no
// embedded file, no lock file is left in the working directory.
func TestPortInUseLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	bin := buildReleaseAdmin(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	r := runCLI(t, bin, dir, nil, fmt.Sprintf("--server.port=%d", port), "--server.address=127.0.0.1")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, fmt.Sprintf("server.port %d is in use (listening on 127.0.0.1:%d): stop the program using it, or choose another port with --server.port=PORT", port, port))
	requireEmptyDir(t, dir, "a start on a port in use")
}
