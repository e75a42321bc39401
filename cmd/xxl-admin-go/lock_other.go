//go:build !unix && !windows

package main

// lockFile is a no-op where neither flock nor Windows share modes exist: there the
// single-instance guard of the embedded database is up to the operator.
func lockFile(string) (release func(), err error) { return func() {}, nil }
