package console

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// admin-http.md §2.2: the three envelopes byte for byte (Jackson's field order and
// nulls; `success` after the fields).
func TestEnvelopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d       dialect
		code    int
		msg     string
		payload string
		want    string
	}{
		{v2, 200, "", "", `{"code":200,"msg":null,"content":null}`},
		{v2, 200, "", `"42"`, `{"code":200,"msg":null,"content":"42"}`},
		{v2, 500, "bad <input>", "", `{"code":500,"msg":"bad <input>","content":null}`},
		{v32, 200, "", `"42"`, `{"code":200,"msg":"Success","content":"42","success":true}`},
		{v32, 500, "", "", `{"code":500,"msg":"Fail","content":null,"success":false}`},
		{v3, 200, "", "", `{"code":200,"msg":"Success","data":null,"success":true}`},
		{v3, 500, "x", "", `{"code":500,"msg":"x","data":null,"success":false}`},
	} {
		var p []byte
		if tc.payload != "" {
			p = []byte(tc.payload)
		}
		require.Equal(t, tc.want, string(envelope(tc.d, tc.code, tc.msg, p)))
	}
}

// admin-http.md §10: which dialect answers, by path and by what the request carries.
func TestChooseDialect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind routeKind
		h    hints
		want dialect
	}{
		{v3Only, hints{identity: true}, v3},
		{v2Only, hints{}, v2},
		{v2Only, hints{identity: true}, v2},
		{v2Only, hints{tokenLogin: true}, v32},
		{v2Only, hints{token: true}, v32},
		{v2Only, hints{token: true, identity: true}, v2}, // identity authenticated
		{shared, hints{}, v2},
		{shared, hints{identity: true}, v2},
		{shared, hints{tokenLogin: true}, v3},
		{shared, hints{identity: true, v3Paging: true}, v3},
		{shared, hints{tokenLogin: true, v2Paging: true}, v32},
		{shared, hints{v3Paging: true}, v3},
		{shared, hints{token: true}, v3},
	} {
		require.Equal(t, tc.want, chooseDialect(tc.kind, tc.h), "%+v %v", tc.h, tc.kind)
	}
}

// The servlet-style parameter reader: '&' only, '+' and escapes decoded, bad escapes
// kept raw, several values joined for bean properties.
func TestFormParsing(t *testing.T) {
	t.Parallel()
	f := form{}
	f.addQuery("a=1&b=x+y%21&c=echo+a;echo+b&d=%zz&ids[]=1&ids%5B%5D=2&&e")
	require.Equal(t, "1", f.str("a"))
	require.Equal(t, "x y!", f.str("b"))
	require.Equal(t, "echo a;echo b", f.str("c"))
	require.Equal(t, "%zz", f.str("d"))
	require.True(t, f.has("e"))
	ids, err := f.ids()
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, ids)
	f.addQuery("p=1&p=3")
	require.Equal(t, "1,3", f.joined("p"))
	_, err = f.int("b", 0)
	require.Error(t, err)
	n, err := f.int("missing", -1)
	require.NoError(t, err)
	require.Equal(t, -1, n)
}
