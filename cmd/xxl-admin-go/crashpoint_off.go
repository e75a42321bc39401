//go:build !crashpoints

package main

import "io"

// crashPoint is nil in every build but the process tests' own (crashpoint_on.go): a
// released admin has no fault-injection hook, whatever its environment says.
func crashPoint(string, io.Writer) func(string) { return nil }
