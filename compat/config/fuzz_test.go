package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/go-sql-driver/mysql"
)

// FuzzParseProperties checks that no input panics, errors stay on one line, and that
// whatever parses survives being written back out and parsed again.
func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{
		upstreamFile, "a=b", "a:b\\\n  c", "# x\\\ny z", `k\=\:\ ey = \u0041\t`, "a=\\u12", "\r\n\r", "\xe9=\xff",
		"\uFEFFa=b", "a\\\\\n=b", "!\n#\n a", `\uD83D\uDE00=\uD800`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := parseProperties(data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		var b strings.Builder
		for _, p := range props {
			if p.Line < 1 {
				t.Fatalf("line %d", p.Line)
			}
			b.WriteString(escapeProperty(p.Key, true))
			b.WriteByte('=')
			b.WriteString(escapeProperty(p.Value, false))
			b.WriteByte('\n')
		}
		again, err := parseProperties([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if len(again) != len(props) {
			t.Fatalf("re-parse gave %d properties, want %d", len(again), len(props))
		}
		for i := range props {
			if again[i].Key != props[i].Key || again[i].Value != props[i].Value {
				t.Fatalf("property %d: %q=%q became %q=%q", i, props[i].Key, props[i].Value, again[i].Key, again[i].Value)
			}
		}
	})
}

// escapeProperty writes s in properties syntax, the way Properties.store does: every
// separator in a key and leading space in a value escaped, non-ASCII as \uXXXX.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case strings.ContainsRune("=:#!", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FuzzParseJDBCURL checks that no URL panics, errors are one line without the password,
// and an accepted URL yields a configuration the driver can take back from a DSN.
func FuzzParseJDBCURL(f *testing.F) {
	for _, seed := range []string{
		defaultURL,
		"jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=UTC&useSSL=false",
		"jdbc:mysql://db:3306/xxl_job?characterEncoding=UTF-8&serverTimezone=GMT%2B8",
		"jdbc:mysql://db1:3306,db2:3306/xxl_job?serverTimezone=Asia/Shanghai",
		"jdbc:mysql://[::1]:3306/xxl_job?serverTimezone=Asia/Shanghai",
		"jdbc:mariadb://db/xxl_job?timezone=UTC&sslMode=trust",
		"jdbc:mysql://u:p@db/x?user=a&password=b&sslMode=VERIFY_CA&connectTimeout=5",
		"u:p@tcp(db:3306)/xxl_job?loc=Local&parseTime=false",
		"jdbc:mysql:replication://[fe80::1%25eth0],h/x?serverTimezone=CST",
		"jdbc:mysql:///x?serverTimezone=%2B05:30",
	} {
		f.Add(seed)
	}
	const secret = "Zq9-Secret-Pw"
	f.Fuzz(func(t *testing.T, u string) {
		c, _, err := parseJDBCURL(jdbcInput{url: u, user: "root", password: secret, timeout: time.Second})
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("multi-line error %q", msg)
			}
			if strings.Contains(msg, secret) {
				t.Fatalf("error shows the password: %q", msg)
			}
			return
		}
		if c.Addr == "" || c.DBName == "" || c.Loc == nil {
			t.Fatalf("incomplete config from %q: %+v", u, c)
		}
		if !c.ParseTime || !c.ClientFoundRows || c.InterpolateParams == unsafeCollation(c.Collation) || c.MultiStatements {
			t.Fatalf("forced settings lost for %q", u)
		}
		if c.User == "" || strings.Contains(c.User, ":") {
			return // the DSN syntax cannot carry these; Open can
		}
		ds := DataSource{MySQL: c}
		back, err := mysql.ParseDSN(ds.DSN())
		if err != nil {
			t.Fatalf("DSN of %q does not parse: %v", u, err)
		}
		if back.Addr != c.Addr || back.DBName != c.DBName || back.User != c.User || back.Passwd != c.Passwd ||
			back.Loc.String() != c.Loc.String() {
			t.Fatalf("DSN of %q changes the configuration: %+v vs %+v", u, back, c)
		}
		if _, err := mysql.ParseDSN(ds.ServerDSN()); err != nil {
			t.Fatalf("server DSN of %q does not parse: %v", u, err)
		}
	})
}
