// Package workflow runs DAGs of jobs: it validates definitions, starts runs, fires
// the nodes whose parents allow it, exactly once each, and advances runs on their
// nodes' results (docs/WORKFLOWS.md). It knows nothing of HTTP; its SQL is in schema.
package workflow
