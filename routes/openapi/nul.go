package openapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// nulField names the first field of a JSON body (a dotted path, object keys in name
// order) whose text holds a NUL character (written \u0000: JSON has no other way).
// PostgreSQL's text holds no NUL, MySQL's and SQLite's do: such a body is refused on
// every database alike, before anything is read or stored.
func nulField(body []byte) (string, bool) {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return "", false
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "", false // the call's decode says what is wrong
	}
	return findNUL(v, "")
}

func findNUL(v any, path string) (string, bool) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch c := v.(type) {
	case string:
		return path, strings.ContainsRune(c, 0)
	case []any:
		for i, e := range c {
			if p, ok := findNUL(e, join(strconv.Itoa(i))); ok {
				return p, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			name := strings.ReplaceAll(k, "\x00", `\0`)
			if strings.ContainsRune(k, 0) {
				return join(name), true
			}
			if p, ok := findNUL(c[k], join(name)); ok {
				return p, true
			}
		}
	}
	return "", false
}
