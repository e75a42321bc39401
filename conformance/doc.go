// Package conformance is the parity suite: scenarios that drive an xxl-job admin and
// real executors over HTTP and judge the admin by its database rows and by what the
// executors saw. Run it with `go test ./conformance/...`; see README.md.
package conformance
