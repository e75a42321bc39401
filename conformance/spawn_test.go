package conformance

import "testing"

// spawnSlots bounds, per database server, the second admins of ours that scenarios
// start (misfire, context-path: one per executor column): each holds about seven of the
// server's connections while its scenario runs, and with five columns a dozen would
// start at once, near PostgreSQL's default limit of 100 connections (MariaDB's: 151),
// which the other packages' tests share. A scenario waits for a slot before its admin
// starts; nothing it times has begun then.
var spawnSlots = map[bool]chan struct{}{false: make(chan struct{}, 4), true: make(chan struct{}, 4)}

// spawnSlot takes a slot of the server's (postgres: PostgreSQL, else MariaDB) until t
// ends, after the admin started under t has stopped.
func spawnSlot(t *testing.T, postgres bool) {
	slots := spawnSlots[postgres]
	slots <- struct{}{}
	t.Cleanup(func() { <-slots })
}
