package console

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// dialect is the answer format a request gets (admin-http.md §2.2).
type dialect int

const (
	// v2 is ReturnT of 2.x–3.1: {"code","msg","content"}, msg null on success.
	v2 dialect = iota
	// v32 is ReturnT of 3.2.0: {"code","msg","content","success"}, msg "Success".
	v32
	// v3 is Response of 3.3+: {"code","msg","data","success"}, msg "Success".
	v3
)

// routeKind says which upstream lines have a path.
type routeKind int

const (
	// shared paths exist in every line and answer by what the request carries.
	shared routeKind = iota
	// v2Only paths (add, save, remove, /login, …) were renamed in 3.3.
	v2Only
	// v3Only paths (insert, delete, /auth/*) appeared in 3.2/3.3.
	v3Only
)

// hints is what a request carries that tells its client's line apart.
type hints struct {
	token      bool // an xxl_job_login_token cookie or header (3.2+ client)
	identity   bool // an XXL_JOB_LOGIN_IDENTITY cookie (2.x client)
	v3Paging   bool // offset or pagesize, or ids[] (3.3+ forms)
	v2Paging   bool // start or length (DataTables, ≤3.2)
	tokenLogin bool // authenticated by the token (wins over the identity cookie)
}

// chooseDialect picks the answer format. The path decides when it exists in one line
// only (insert/delete/auth → 3.3+; add/save/remove/login → 2.x, or 3.2.0's form when
// the client holds a 3.2 token). On shared paths 3.3+ parameters (offset/pagesize,
// ids[]) mean 3.3+, DataTables parameters (start/length) mean ≤3.2, and otherwise the
// session decides: a token means 3.3+, the identity cookie or nothing means 2.x.
func chooseDialect(kind routeKind, h hints) dialect {
	tokenClient := h.tokenLogin || (h.token && !h.identity)
	switch kind {
	case v3Only:
		return v3
	case v2Only:
		if tokenClient {
			return v32
		}
		return v2
	}
	switch {
	case h.v3Paging:
		return v3
	case h.v2Paging:
		if tokenClient {
			return v32
		}
		return v2
	case tokenClient:
		return v3
	}
	return v2
}

// envelope encodes {code,msg,payload} in a dialect. payload is valid JSON or nil
// (null). msg "" is null in v2 and "Success"/"Fail" in the others.
func envelope(d dialect, code int, msg string, payload []byte) []byte {
	b := make([]byte, 0, 64+len(msg)+len(payload))
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"msg":`...)
	switch {
	case msg != "":
		b = protocol.AppendString(b, msg)
	case d == v2:
		b = append(b, "null"...)
	case code == protocol.CodeSuccess:
		b = append(b, `"Success"`...)
	default:
		b = append(b, `"Fail"`...)
	}
	if d == v3 {
		b = append(b, `,"data":`...)
	} else {
		b = append(b, `,"content":`...)
	}
	if payload == nil {
		payload = []byte("null")
	}
	b = append(b, payload...)
	if d != v2 {
		if code == protocol.CodeSuccess {
			b = append(b, `,"success":true`...)
		} else {
			b = append(b, `,"success":false`...)
		}
	}
	return append(b, '}')
}

// marshal encodes v as JSON without HTML escaping (as Jackson writes it); answers
// carry nosniff so no browser treats them as a page.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// sendJSON writes a JSON answer with HTTP 200, as upstream answers every outcome.
func sendJSON(c *fiber.Ctx, body []byte) error { return sendJSONStatus(c, fiber.StatusOK, body) }

// sendJSONStatus writes a JSON answer with another status (403 for a cross-site
// request, which upstream does not refuse at all).
func sendJSONStatus(c *fiber.Ctx, status int, body []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).Send(body)
}
