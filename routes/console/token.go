package console

import (
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Scoped API tokens of the job OpenAPI — /apitoken/* (administrators only; not
// upstream). The secret appears in the answer of insert and nowhere else.

// tokenJSON is a token as the console lists it: never its hash.
type tokenJSON struct {
	ID         int     `json:"id"`
	Name       string  `json:"name"`
	Groups     []int   `json:"groups"`
	ReadOnly   bool    `json:"readOnly"`
	State      string  `json:"state"`
	ExpireTime *string `json:"expireTime"`
	CreateUser string  `json:"createUser"`
	CreateTime *string `json:"createTime"`
	LastUsed   *string `json:"lastUsed"`
	RevokeUser string  `json:"revokeUser"`
	RevokeTime *string `json:"revokeTime"`
}

// createdJSON is the answer of insert: the token and its secret, shown once.
type createdJSON struct {
	tokenJSON
	Secret string `json:"secret"`
}

func (r *call) token(t schema.APIToken) tokenJSON {
	loc := r.k.Manage.Location()
	ms := func(v int64) *string { return localMs(v, loc) }
	groups := t.Groups
	if groups == nil {
		groups = []int{}
	}
	return tokenJSON{ID: t.ID, Name: t.Name, Groups: groups, ReadOnly: t.ReadOnly, State: string(r.k.Manage.TokenState(t)),
		ExpireTime: ms(t.ExpireTime), CreateUser: t.CreateUser, CreateTime: ms(t.CreateTime), LastUsed: ms(t.LastUsed),
		RevokeUser: t.RevokeUser, RevokeTime: ms(t.RevokeTime)}
}

func tokenPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	revoked, err := r.f.int("revoked", 0)
	if err != nil {
		return r.fail(err)
	}
	ts, total, err := r.k.Manage.ListTokens(r.c.UserContext(), r.p, revoked == 1, off, limit)
	if err != nil {
		return r.fail(err)
	}
	out := make([]tokenJSON, len(ts))
	for i, t := range ts {
		out[i] = r.token(t)
	}
	return r.page(out, total)
}

func tokenAdd(r *call) error {
	ro := r.f.str("readOnly")
	in := manage.TokenInput{Name: r.f.str("name"), Groups: r.f.joined("groups", "groups[]"),
		ReadOnly: ro == "1" || ro == "true" || ro == "on", Expire: r.f.str("expire")}
	t, err := r.k.Manage.CreateToken(r.c.UserContext(), r.p, in)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(createdJSON{tokenJSON: r.token(t.APIToken), Secret: t.Secret})
}

func tokenRevoke(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RevokeToken(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}
