package schema_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// An executor's result and a console kill written to the same log at the same moment
// both succeed (on MariaDB the guarded result update goes by primary key, as the kill
// does, so the two lock the row and its I_handle_code entry in one order). The kill's
// message is kept whichever comes first: the result is written only to a log without one.
func TestResultAndKillOnOneLogDoNotDeadlock(t *testing.T) {
	t.Parallel()
	_, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	for round := range 200 {
		id, err := st.InsertLog(ctx, 1, 1, now)
		require.NoError(t, err)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var resultErr, killErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			if round%2 == 0 {
				resultErr = st.CompleteLogs(ctx, now, []schema.HandleUpdate{{ID: id, Code: 500, Msg: "killed"}})
			} else {
				_, resultErr = st.CompleteLog(ctx, id, now, 500, "killed")
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			killErr = st.OverwriteResult(ctx, id, now, 500, "kill")
		}()
		close(start)
		wg.Wait()
		require.NoError(t, resultErr, "round %d", round)
		require.NoError(t, killErr, "round %d", round)
		l, err := st.LoadLog(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 500, l.HandleCode)
		require.Equal(t, "kill", l.HandleMsg)
	}
}
