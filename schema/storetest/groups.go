package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runGroups(t *testing.T, setup setupFunc) {
	t.Run("InsertLoad", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		want := schema.Group{AppName: "app-a", Title: "Title A", AddressType: 1, AddressList: "http://a:1,http://b:2",
			UpdateTime: b.at("2024-05-01 10:00:00")}
		id := b.group(t, want.AppName, want.Title, want.AddressType, want.AddressList)
		got, err := b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, id, got.ID)
		require.Equal(t, want.AppName, got.AppName)
		require.Equal(t, want.Title, got.Title)
		require.Equal(t, want.AddressType, got.AddressType)
		require.Equal(t, want.AddressList, got.AddressList)
		b.requireTime(t, want.UpdateTime, got.UpdateTime)

		id2 := b.group(t, "app-b", "B", 0, "")
		got, err = b.st.LoadGroup(b.ctx, id2)
		require.NoError(t, err)
		require.Equal(t, "", got.AddressList, "no addresses is NULL, read as empty")
		require.Greater(t, id2, id)

		_, err = b.st.LoadGroup(b.ctx, 999999)
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("GroupsOrderAndFilter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.group(t, "t-b", "one", 0, "")
		b.group(t, "t-a", "two", 1, "http://m:1")
		want := []string{"t-a/one", "t-a/two", "t-b/one"}
		if b.st.Layout().Name == schema.Layout35 {
			// App names are unique from 3.5 on (i_app_name).
			_, err := b.st.InsertGroup(b.ctx, schema.Group{AppName: "t-a", Title: "one"})
			require.Error(t, err, "a second group of an app name")
			want = want[1:]
		} else {
			b.group(t, "t-a", "one", 0, "")
		}
		all, err := b.st.Groups(b.ctx, -1)
		require.NoError(t, err)
		var names []string
		for _, g := range all {
			names = append(names, g.AppName+"/"+g.Title)
		}
		require.Equal(t, append(want, "xxl-job-executor-sample/"+all[len(want)].Title), names)
		auto, err := b.st.Groups(b.ctx, 0)
		require.NoError(t, err)
		require.Len(t, auto, len(want))
		manual, err := b.st.Groups(b.ctx, 1)
		require.NoError(t, err)
		require.Len(t, manual, 1)
		require.Equal(t, "http://m:1", manual[0].AddressList)
	})
	t.Run("SetGroupAddresses", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.group(t, "app", "keep me", 0, "")
		now := b.at("2024-05-02 11:00:00")
		require.NoError(t, b.st.SetGroupAddresses(b.ctx, id, "http://x:1,http://y:2", now))
		g, err := b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "http://x:1,http://y:2", g.AddressList)
		require.Equal(t, "keep me", g.Title)
		b.requireTime(t, now, g.UpdateTime)
		require.NoError(t, b.st.SetGroupAddresses(b.ctx, id, "", now))
		g, err = b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "", g.AddressList)
	})
	t.Run("UpdateDelete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.group(t, "app", "old", 0, "")
		up := schema.Group{ID: id, AppName: "app2", Title: "new", AddressType: 1, AddressList: "http://z:1",
			UpdateTime: b.at("2024-06-01 00:00:00")}
		if b.layout.GroupAccessToken {
			up.AccessToken = "tok"
		}
		require.NoError(t, b.st.UpdateGroup(b.ctx, up))
		g, err := b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, up.AppName, g.AppName)
		require.Equal(t, up.Title, g.Title)
		require.Equal(t, up.AddressType, g.AddressType)
		require.Equal(t, up.AddressList, g.AddressList)
		require.Equal(t, up.AccessToken, g.AccessToken)
		b.requireTime(t, up.UpdateTime, g.UpdateTime)
		require.NoError(t, b.st.DeleteGroup(b.ctx, id))
		_, err = b.st.LoadGroup(b.ctx, id)
		require.ErrorIs(t, err, schema.ErrNotFound)
		require.NoError(t, b.st.DeleteGroup(b.ctx, id), "deleting a missing group is no error")
	})
	t.Run("LoadGroups", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		a := b.group(t, "a", "a", 0, "")
		c := b.group(t, "c", "c", 0, "")
		m, err := b.st.LoadGroups(b.ctx, []int{a, c, 999999})
		require.NoError(t, err)
		require.Len(t, m, 2)
		require.Equal(t, "c", m[c].AppName)
		m, err = b.st.LoadGroups(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, m)
	})
	t.Run("GroupTokens", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if !b.layout.GroupAccessToken {
			m, err := b.st.GroupTokens(b.ctx)
			require.NoError(t, err)
			require.Nil(t, m, "no access_token column")
			return
		}
		id, err := b.st.InsertGroup(b.ctx, schema.Group{AppName: "tok-app", Title: "t", AccessToken: "s3cret"})
		require.NoError(t, err)
		b.group(t, "no-tok", "t", 0, "")
		m, err := b.st.GroupTokens(b.ctx)
		require.NoError(t, err)
		require.Equal(t, "s3cret", m["tok-app"])
		require.NotContains(t, m, "no-tok")
		g, err := b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "s3cret", g.AccessToken)
	})
	t.Run("ListGroups", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.group(t, "pay_svc", "Pay", 0, "")
		b.group(t, "zpayxsvc", "Pay 100%", 0, "") // matches pay_ if _ were a wildcard
		b.group(t, "order-svc", "Order", 0, "")
		gs, total, err := b.st.ListGroups(b.ctx, schema.GroupFilter{AppName: "pay_"}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total, "_ is matched literally")
		require.Equal(t, "pay_svc", gs[0].AppName)
		gs, total, err = b.st.ListGroups(b.ctx, schema.GroupFilter{Title: "100%"}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total, "%% is matched literally")
		require.Equal(t, "zpayxsvc", gs[0].AppName)
		_, total, err = b.st.ListGroups(b.ctx, schema.GroupFilter{AppName: "SVC"}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 3, total, "case-insensitive")
		gs, total, err = b.st.ListGroups(b.ctx, schema.GroupFilter{}, 1, 2)
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Len(t, gs, 2)
		require.Equal(t, "pay_svc", gs[0].AppName, "app_name order: order-svc, [pay_svc, xxl-job-…], zpayxsvc")
		require.Equal(t, "xxl-job-executor-sample", gs[1].AppName)
		n, err := b.st.CountGroups(b.ctx)
		require.NoError(t, err)
		require.Equal(t, 4, n)
	})
}
