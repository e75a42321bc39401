package adminapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// TestJobOpenAPIDrain: drainExecutor, listDrains and undrainExecutor with the global
// access token, on each database; a scoped token reads its groups' drains but may not
// drain (the right to edit groups), and a bad body is refused in the envelope.
func TestJobOpenAPIDrain(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		ctx := context.Background()
		g, err := b.store.InsertGroup(ctx, schema.Group{AppName: "drain-api", Title: "drain", AddressType: 1,
			AddressList: "http://10.0.0.7:9999/,http://10.0.0.8:9999/", UpdateTime: time.Now()})
		require.NoError(t, err)
		body := func(addr string) string { return `{"jobGroup":` + strconv.Itoa(g) + `,"address":"` + addr + `"}` }

		r := b.admin(t, "drainExecutor", body("http://10.0.0.8:9999/"))
		require.Equal(t, 200, r.Code, r.msg())
		list := func(headers ...string) []map[string]any {
			r := b.call(t, "listDrains", `{"jobGroup":`+strconv.Itoa(g)+`}`, headers...)
			require.Equal(t, 200, r.Code, r.msg())
			var out []map[string]any
			require.NoError(t, json.Unmarshal(r.Data, &out))
			return out
		}
		got := list("XXL-JOB-ACCESS-TOKEN", "api-token")
		require.Len(t, got, 1)
		require.Equal(t, "http://10.0.0.8:9999/", got[0]["address"])
		require.Equal(t, float64(g), got[0]["jobGroup"])
		require.NotEmpty(t, got[0]["drainedBy"])

		r = b.admin(t, "drainExecutor", body("http://10.0.0.9:9999/"))
		require.Equal(t, 500, r.Code)
		require.Contains(t, r.msg(), "is not an address of this executor")
		r = b.admin(t, "drainExecutor", `{"jobGroup":"x"}`)
		require.Equal(t, 500, r.Code)
		require.True(t, strings.HasPrefix(r.msg(), "invalid request, body is not a JSON drain object"), r.msg())
		r = b.admin(t, "drainExecutor", `{"jobGroup":99999999999,"address":"a"}`)
		require.Equal(t, "invalid request, jobGroup out of range.", r.msg())

		secret := "xat_" + strings.Repeat("D", 43)
		sum := sha256.Sum256([]byte(secret))
		_, err = b.store.InsertAPIToken(ctx, schema.APIToken{Name: "ops", Hash: hex.EncodeToString(sum[:]),
			Groups: []int{g}, CreateUser: "admin", CreateTime: time.Now().UnixMilli()})
		require.NoError(t, err)
		require.Len(t, list("Authorization", "Bearer "+secret), 1, "a token reads its groups' drains")
		r = b.call(t, "undrainExecutor", body("http://10.0.0.8:9999/"), "Authorization", "Bearer "+secret)
		require.Equal(t, 500, r.Code)
		require.Equal(t, "Only administrators can do this", r.msg())
		require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.undrain' AND outcome = 'denied'"))

		r = b.admin(t, "undrainExecutor", body("http://10.0.0.8:9999/"))
		require.Equal(t, 200, r.Code, r.msg())
		require.Empty(t, list("XXL-JOB-ACCESS-TOKEN", "api-token"))
		require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.drain' AND outcome = 'ok'"))
		require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.undrain' AND outcome = 'ok'"))
	})
}
