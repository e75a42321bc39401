package console

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
)

// MaxFormBytes caps a console request body (GLUE sources are the largest fields).
const MaxFormBytes = 5 << 20

// errTooLarge reports a body over MaxFormBytes.
var errTooLarge = errors.New("request body too large")

// form holds a request's parameters as the servlet API sees them: the query string
// and an application/x-www-form-urlencoded or multipart body, merged, in order. JSON
// bodies are never read (upstream's console endpoints do not read them either).
type form map[string][]string

// parseForm reads the parameters of a request, the body capped at MaxFormBytes.
func parseForm(c *fiber.Ctx) (form, error) {
	f := form{}
	f.addQuery(string(c.Request().URI().QueryString()))
	ct := string(c.Request().Header.ContentType())
	mt, params, _ := mime.ParseMediaType(ct)
	switch mt {
	case "application/x-www-form-urlencoded":
		body, err := readCapped(c, MaxFormBytes)
		if err != nil {
			return nil, err
		}
		f.addQuery(string(body))
	case "multipart/form-data":
		body, err := readCapped(c, MaxFormBytes)
		if err != nil {
			return nil, err
		}
		if err := f.addMultipart(body, params["boundary"]); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// addQuery parses name=value pairs separated by '&' only (Tomcat keeps ';' inside
// values, which url.ParseQuery would reject). An undecodable escape keeps the raw text.
func (f form) addQuery(q string) {
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		f[k] = append(f[k], v)
	}
}

func (f form) addMultipart(body []byte, boundary string) error {
	if boundary == "" {
		return errors.New("multipart body without boundary")
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := part.FormName()
		if name == "" || part.FileName() != "" {
			continue
		}
		v, err := io.ReadAll(part)
		if err != nil {
			return err
		}
		f[name] = append(f[name], string(v))
	}
}

// readCapped returns the body, or errTooLarge past limit (the rest is drained a
// little so the client still reads the answer).
func readCapped(c *fiber.Ctx, limit int) ([]byte, error) {
	req := c.Request()
	if !req.IsBodyStream() {
		b := req.Body()
		if len(b) > limit {
			return nil, errTooLarge
		}
		return b, nil
	}
	stream := req.BodyStream()
	b, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		_, _ = io.CopyN(io.Discard, stream, 64<<20)
		return nil, errTooLarge
	}
	return b, nil
}

// notUTF8 names the first parameter (in name order) whose name or a value is not valid
// UTF-8, as it can be shown.
func (f form) notUTF8() (string, bool) {
	// Every call reads this; the names are sorted only when one is bad.
	var bad []string
	for k, vs := range f {
		ok := utf8.ValidString(k)
		for _, v := range vs {
			ok = ok && utf8.ValidString(v)
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return "", false
	}
	return strings.ToValidUTF8(slices.Min(bad), "\ufffd"), true
}

// withNUL names the first parameter (in name order) whose name or a value holds a NUL
// character.
func (f form) withNUL() (string, bool) {
	var bad []string
	for k, vs := range f {
		ok := !strings.ContainsRune(k, 0)
		for _, v := range vs {
			ok = ok && !strings.ContainsRune(v, 0)
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return "", false
	}
	return strings.ReplaceAll(slices.Min(bad), "\x00", `\0`), true
}

// has reports whether a parameter was sent (even empty).
func (f form) has(k string) bool { _, ok := f[k]; return ok }

// str returns the first value of a parameter, "" when absent.
func (f form) str(k string) string {
	if v := f[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// first returns the first value among alternative names (e.g. jobDesc and its 3.5
// spelling name).
func (f form) first(keys ...string) string {
	for _, k := range keys {
		if f.has(k) {
			return f.str(k)
		}
	}
	return ""
}

// joined returns every value of a parameter joined by ',' — how Spring binds several
// values into one String property (permission=1&permission=3 → "1,3").
func (f form) joined(keys ...string) string {
	var all []string
	for _, k := range keys {
		all = append(all, f[k]...)
	}
	return strings.Join(all, ",")
}

// badNumber is an unparsable integer parameter.
type badNumber struct{ field string }

func (e *badNumber) Error() string { return "parameter " + e.field + " is not a number" }

// int reads an integer parameter; absent or empty gives def. Java's Integer.parseInt
// accepts a sign and no spaces, and no value outside 32 bits: neither does atoi32, so
// an id past the INT columns is refused here rather than by PostgreSQL (which fails
// the statement where MySQL finds no row).
func (f form) int(k string, def int) (int, error) {
	v := f.str(k)
	if v == "" {
		return def, nil
	}
	n, err := atoi32(v)
	if err != nil {
		return 0, &badNumber{field: k}
	}
	return n, nil
}

// atoi32 parses a 32-bit integer, as Java's Integer.parseInt.
func atoi32(v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	return int(n), err
}

// int64 reads a long parameter.
func (f form) int64(k string, def int64) (int64, error) {
	v := f.str(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, &badNumber{field: k}
	}
	return n, nil
}

// ids returns the values of the 3.3+ ids[] parameter (also spelled ids).
func (f form) ids() ([]int, error) {
	var out []int
	for _, k := range []string{"ids[]", "ids"} {
		for _, v := range f[k] {
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item == "" {
					continue
				}
				n, err := atoi32(item)
				if err != nil {
					return nil, &badNumber{field: "ids"}
				}
				out = append(out, n)
			}
		}
	}
	return out, nil
}
