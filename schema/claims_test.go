package schema_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Claim ids on MySQL/MariaDB: counted from LAST_INSERT_ID() where the server's
// innodb_autoinc_lock_mode (0 or 1) and auto_increment_increment (1) guarantee a
// multi-row INSERT consecutive ids, read back by marker otherwise. Both paths must
// give every claim the id of its own row, also while other inserts run concurrently.
func TestInsertClaimsIDsBothPaths(t *testing.T) {
	t.Parallel()
	for _, readBack := range []bool{false, true} {
		_, st := schematest.New(t, schema.Layout34)
		if readBack {
			schema.ReadClaimIDsBack(st)
		}
		ctx := context.Background()
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		done := make(chan struct{})
		go func() { // concurrent single-row inserts into the same table
			defer close(done)
			for i := 0; i < 200; i++ {
				_, _ = st.InsertLog(ctx, 9, 9, at)
			}
		}()
		for round := 0; round < 20; round++ {
			marker := schema.ClaimPrefix + "t:" + strconv.Itoa(round)
			claims := make([]schema.Claim, 50)
			for i := range claims {
				claims[i] = schema.Claim{JobGroup: 1, JobID: round*100 + i, Planned: at.Add(time.Duration(i) * time.Second), Marker: marker}
			}
			require.NoError(t, st.InsertClaims(ctx, claims))
			for i, c := range claims {
				l, err := st.LoadLog(ctx, c.LogID)
				require.NoError(t, err)
				require.Equal(t, c.JobID, l.JobID, "round %d claim %d (read back: %v)", round, i, readBack)
				require.Equal(t, marker, l.TriggerMsg)
			}
		}
		<-done
		if !readBack {
			t.Logf("consecutive ids on this server: %v", schema.ConsecutiveClaimIDs(st))
		}
	}
}
