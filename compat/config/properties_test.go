package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseProperties(t *testing.T) {
	t.Parallel()
	type kv = [2]string
	tests := []struct {
		name string
		in   string
		want []kv
	}{
		{"equals", "a=b", []kv{{"a", "b"}}},
		{"colon", "a: b", []kv{{"a", "b"}}},
		{"space", "a b", []kv{{"a", "b"}}},
		{"tab and form feed", "a\t\fb", []kv{{"a", "b"}}},
		{"space around equals", "  a   =   b", []kv{{"a", "b"}}},
		{"trailing space kept", "a=b  ", []kv{{"a", "b  "}}},
		{"second separator is value", "a:=b", []kv{{"a", "=b"}}},
		{"separator after space", "a = = b", []kv{{"a", "= b"}}},
		{"empty value", "a=", []kv{{"a", ""}}},
		{"key only", "a", []kv{{"a", ""}}},
		{"value keeps colons", "url=jdbc:mysql://h:3306/db?x=1", []kv{{"url", "jdbc:mysql://h:3306/db?x=1"}}},
		{"comments", "# c\n! c\n   # indented\na=b", []kv{{"a", "b"}}},
		{"comment does not continue", "# c \\\na=b", []kv{{"a", "b"}}},
		{"blank lines", "\n  \t\n\fa=b\n\n", []kv{{"a", "b"}}},
		{"continuation", "a=b\\\n    c\\\n\td", []kv{{"a", "bcd"}}},
		{"continued line is not a comment", "a=b\\\n  #c", []kv{{"a", "b#c"}}},
		{"even backslashes do not continue", "a=b\\\\\nc=d", []kv{{"a", `b\`}, {"c", "d"}}},
		{"empty continuation ends line", "a=b\\\n\nc=d", []kv{{"a", "b"}, {"c", "d"}}},
		{"backslash at end of file", "a=b\\", []kv{{"a", "b"}}},
		{"continuation in key", "ke\\\n  y=v", []kv{{"key", "v"}}},
		{"escapes", `a=\t\n\r\f\\\q\=\:`, []kv{{"a", "\t\n\r\f\\q=:"}}},
		{"unicode escape", `a=\u0041\u4e2d`, []kv{{"a", "A中"}}},
		{"surrogate pair", `a=\uD83D\uDE00!`, []kv{{"a", "😀!"}}},
		{"escaped separators in key", "a\\=b=c\nd\\:e:f\ng\\ h i", []kv{{"a=b", "c"}, {"d:e", "f"}, {"g h", "i"}}},
		{"escaped backslash before separator", `a\\=b`, []kv{{`a\`, "b"}}},
		{"CRLF", "a=1\r\nb=2\r\n", []kv{{"a", "1"}, {"b", "2"}}},
		{"CR", "a=1\rb=2", []kv{{"a", "1"}, {"b", "2"}}},
		{"CRLF continuation", "a=1\\\r\n  2", []kv{{"a", "12"}}},
		{"duplicates in order", "a=1\na=2", []kv{{"a", "1"}, {"a", "2"}}},
		{"UTF-8", "a=密码", []kv{{"a", "密码"}}},
		{"BOM", "\uFEFFa=b", []kv{{"a", "b"}}},
		{"Latin-1", "a=caf\xe9", []kv{{"a", "café"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			props, err := parseProperties([]byte(tt.in))
			require.NoError(t, err)
			var got []kv
			for _, p := range props {
				got = append(got, kv{p.Key, p.Value})
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParsePropertiesLines(t *testing.T) {
	t.Parallel()
	props, err := parseProperties([]byte("# head\na=1\\\n 2\n\nb=3\r\nc=4"))
	require.NoError(t, err)
	require.Len(t, props, 3)
	require.Equal(t, []int{2, 5, 6}, []int{props[0].Line, props[1].Line, props[2].Line})
}

func TestParsePropertiesErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`a=\u12`, "\n\nk=\\uZZZZ", `\u00=x`} {
		_, err := parseProperties([]byte(in))
		require.Error(t, err, in)
		require.Contains(t, err.Error(), "malformed")
		require.NotContains(t, err.Error(), "\n")
	}
	_, err := parseProperties([]byte("\n\nk=\\uZZZZ"))
	require.ErrorContains(t, err, "line 3")
}
