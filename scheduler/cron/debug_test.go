package cron

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func TestDebugOne(t *testing.T) {
	expr := os.Getenv("DBG_EXPR")
	if expr == "" {
		t.Skip()
	}
	loc, _ := time.LoadLocation(os.Getenv("DBG_ZONE"))
	var from int64
	fmt.Sscan(os.Getenv("DBG_FROM"), &from)
	e, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	debugHook = func(c *calendar) { fmt.Println("  cl:", c.f, time.Unix(c.utc, 0).In(loc)) }
	got, ok := e.Next(time.UnixMilli(from), loc)
	fmt.Println(got, ok)
}
