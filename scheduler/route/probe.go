package route

import (
	"context"
	"strconv"
	"strings"
)

// probe runs FAILOVER (beat) or BUSYOVER (idle beat) over the list in order; the first
// executor answering 200 wins. The report lists every probe made, in the format users
// know from upstream's trigger_msg:
//
//	<label>：<br>address：<a><br>code：<c><br>msg：<m>
//
// with "<br><br>" between entries.
func probe(ctx context.Context, req Request) Result {
	label := req.Labels.Beat
	if req.Strategy == Busyover {
		label = req.Labels.IdleBeat
	}
	var b strings.Builder
	b.Grow(256)
	var num [20]byte
	for _, a := range req.Addresses {
		var code int
		var msg string
		if req.Strategy == Busyover {
			code, msg = req.Prober.IdleBeat(ctx, a, req.JobID)
		} else {
			code, msg = req.Prober.Beat(ctx, a)
		}
		if b.Len() > 0 {
			b.WriteString("<br><br>")
		}
		b.WriteString(label)
		b.WriteString("：<br>address：")
		b.WriteString(a)
		b.WriteString("<br>code：")
		b.Write(strconv.AppendInt(num[:0], int64(code), 10))
		b.WriteString("<br>msg：")
		b.WriteString(javaString(msg))
		if code == 200 {
			return Result{Address: a, Msg: b.String(), OK: true}
		}
	}
	return Result{Msg: b.String()}
}

// javaString renders a reply message as upstream's string concatenation does: the
// executor's usual success reply carries msg null, which reads "null". Prober cannot
// tell null from "", so "" is taken as null.
func javaString(s string) string {
	if s == "" {
		return "null"
	}
	return s
}
