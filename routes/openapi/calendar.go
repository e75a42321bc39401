package openapi

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// The calendar calls, beyond HEAD: listCalendars (any caller), saveCalendar and
// removeCalendar (callers with the administrator's rights: the global access token).
// Jobs name their calendars in addJob/updateJob's calendarIds.

var (
	calendarCalls  = map[string]bool{"listCalendars": true, "saveCalendar": true, "removeCalendar": true}
	calendarWrites = map[string]bool{"saveCalendar": true, "removeCalendar": true}
)

// calendarBody is the body of the calendar calls.
type calendarBody struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	Spec string `json:"spec"`
}

// calendarOut is a calendar as the calls show it.
type calendarOut struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Spec       string `json:"spec"`
	UpdateTime int64  `json:"updateTime"`
}

func (j *Jobs) calendarCall(ctx context.Context, uri string, body []byte, auth func() (caller, error)) protocol.Reply {
	var b calendarBody
	if err := decode(body, &b, "calendar"); err != nil {
		return protocol.Fail(err.Error())
	}
	if msg := outOfInt(intField{"id", int64(b.ID)}); msg != "" {
		return protocol.Fail(msg)
	}
	who, err := auth()
	if err != nil {
		return j.failure(uri, err)
	}
	switch uri {
	case "listCalendars":
		cals, err := j.Manage.Calendars(ctx)
		if err != nil {
			return j.failure(uri, err)
		}
		out := make([]calendarOut, len(cals))
		for i, c := range cals {
			out[i] = calendarOut{ID: c.ID, Name: c.Name, Kind: c.Kind, Spec: c.Spec, UpdateTime: c.UpdateTime}
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return j.failure(uri, err)
		}
		return success(string(raw))
	case "saveCalendar":
		id, err := j.Manage.SaveCalendar(ctx, who.p, manage.CalendarInput{ID: b.ID, Name: b.Name, Kind: b.Kind, Spec: b.Spec})
		if err != nil {
			return j.failure(uri, err)
		}
		j.Log.Info("job openapi call", "call", uri, "calendar_id", id, "caller", who.who)
		return success(strconv.Itoa(id))
	default: // removeCalendar
		if err := j.Manage.RemoveCalendar(ctx, who.p, b.ID); err != nil {
			return j.failure(uri, err)
		}
		j.Log.Info("job openapi call", "call", uri, "calendar_id", b.ID, "caller", who.who)
		return success("")
	}
}
