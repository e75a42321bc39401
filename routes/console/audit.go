package console

import (
	"encoding/json"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The audit log — /audit/pageList (administrators only; not upstream), answered in
// the dialect of either console line like every list.

// auditJSON is an audit entry as the Audit page lists it. Time is in the server's zone.
type auditJSON struct {
	ID         int64           `json:"id"`
	Time       string          `json:"time"`
	Actor      string          `json:"actor"`
	ActorKind  string          `json:"actorKind"`
	Client     string          `json:"client"`
	Action     string          `json:"action"`
	TargetKind string          `json:"targetKind"`
	TargetID   string          `json:"targetId"`
	Changes    json.RawMessage `json:"changes"`
	Outcome    string          `json:"outcome"`
}

func (r *call) audit(e schema.AuditEntry) auditJSON {
	out := auditJSON{ID: e.ID, Time: time.UnixMilli(e.Time).In(r.k.Manage.Location()).Format(manage.DateTimeLayout),
		Actor: e.Actor, ActorKind: e.ActorKind, Client: e.Client, Action: e.Action, TargetKind: e.TargetKind,
		TargetID: e.TargetID, Outcome: e.Outcome, Changes: json.RawMessage("null")}
	switch {
	case e.Changes == "":
	case json.Valid([]byte(e.Changes)):
		out.Changes = json.RawMessage(e.Changes)
	default:
		// Written by hand or cut short: shown as the text it is.
		out.Changes = marshal(e.Changes)
	}
	return out
}

// auditPageList lists the audit log: filters actor, action, targetKind, targetId and
// from/to ("yyyy-MM-dd HH:mm:ss" in the server's zone), paged as the other lists.
func auditPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	q := manage.AuditQuery{Actor: r.f.str("actor"), Action: r.f.str("action"), TargetKind: r.f.str("targetKind"),
		TargetID: r.f.str("targetId")}
	if q.From, err = r.k.Manage.ParseAuditTime("audit_from", r.f.str("from"), false); err != nil {
		return r.fail(err)
	}
	if q.To, err = r.k.Manage.ParseAuditTime("audit_to", r.f.str("to"), true); err != nil {
		return r.fail(err)
	}
	es, total, err := r.k.Manage.ListAudit(r.c.UserContext(), r.p, q, off, limit)
	if err != nil {
		return r.fail(err)
	}
	out := make([]auditJSON, len(es))
	for i, e := range es {
		out[i] = r.audit(e)
	}
	return r.page(out, total)
}
