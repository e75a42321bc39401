package workflow

import "fmt"

// The size limits of a definition's graph as a whole (docs/WORKFLOWS.md, "Validation
// on save"): what every run reads, and what each version of the workflow stores once.
// They are checked before the graph's shape and each node's parameter.
const (
	// MaxNodes bounds a workflow's nodes.
	MaxNodes = 200
	// MaxGraphBytes bounds a graph's stored JSON.
	MaxGraphBytes = 256 << 10
)

// checkGraphSize refuses a graph with more than MaxNodes nodes or whose stored JSON is
// longer than MaxGraphBytes.
func checkGraphSize(g Graph) error {
	if len(g.Nodes) > MaxNodes {
		return refuse("", "has %d nodes, more than %d", len(g.Nodes), MaxNodes)
	}
	if n := len(g.JSON()); n > MaxGraphBytes {
		return &Error{Msg: fmt.Sprintf("the graph holds %d bytes, more than %d", n, MaxGraphBytes)}
	}
	return nil
}
