package main

import (
	"strings"
	"testing"
	"time"
)

// pageOf must read both list shapes (admin-http.md §2.2 paging shapes) and refuse
// anything else, so the console measure never times an error page as a page.
func TestPageOf(t *testing.T) {
	for _, c := range []struct {
		name, body  string
		total       int64
		rows        int
		errContains string
	}{
		{name: "2.4 DataTables map", body: `{"recordsTotal":1000000,"recordsFiltered":1000000,"data":[{"id":2},{"id":1}]}`, total: 1000000, rows: 2},
		{name: "3.3+ page model", body: `{"code":200,"msg":"Success","data":{"offset":0,"pagesize":0,"data":[{"id":3}],"total":42},"success":true}`, total: 42, rows: 1},
		{name: "3.3+ failure", body: `{"code":500,"msg":"not login for path:/joblog/pageList","data":null,"success":false}`, errContains: "not a success"},
		{name: "2.x failure envelope", body: `{"code":500,"msg":"permission denied","content":null}`, errContains: "not a success"},
		{name: "HTML login page", body: `<!DOCTYPE html><html></html>`, errContains: "not JSON"},
	} {
		total, rows, err := pageOf([]byte(c.body))
		if c.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), c.errContains) {
				t.Errorf("%s: err %v, want one containing %q", c.name, err, c.errContains)
			}
			continue
		}
		if err != nil || total != c.total || rows != c.rows {
			t.Errorf("%s: %d, %d, %v; want %d, %d", c.name, total, rows, err, c.total, c.rows)
		}
	}
}

// The variants must send what each client line's page sends: 2.4 start/length with
// every filter, 3.x offset/pagesize, and time ranges in the console's format.
func TestConsoleVariantParams(t *testing.T) {
	now := time.Date(2026, 3, 10, 14, 5, 0, 0, time.UTC)
	vs := consoleVariants(consoleSeed{groupBase: 2, jobBase: 2, groups: 10, jobs: 10000, logs: 1000000}, now)
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.name] {
			t.Errorf("duplicate variant name %q", v.name)
		}
		seen[v.name] = true
		p := v.params
		switch {
		case v.list && v.client == "2.4":
			if p.Get("start") != "0" || p.Get("length") != "10" || p.Has("offset") {
				t.Errorf("%s: 2.4 paging wanted, got %s", v.name, p.Encode())
			}
		case v.list && v.client == "3.x":
			if !p.Has("offset") || p.Get("pagesize") != "10" || p.Has("start") {
				t.Errorf("%s: 3.x paging wanted, got %s", v.name, p.Encode())
			}
		}
		if v.path == "/joblog/pageList" {
			for _, k := range []string{"jobGroup", "jobId", "logStatus", "filterTime"} {
				if !p.Has(k) {
					t.Errorf("%s: %s missing (3.0+ requires every filter)", v.name, k)
				}
			}
		}
	}
	if got := vs[0].params.Get("filterTime"); got != "2026-03-10 00:00:00 - 2026-03-10 23:59:59" {
		t.Errorf("today's range %q", got)
	}
	if !seen["joblog: one group, page 1001 (offset 10000)"] {
		t.Errorf("deep page variant missing or renamed: %v", seen)
	}
}
