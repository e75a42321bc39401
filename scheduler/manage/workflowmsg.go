package manage

import (
	"regexp"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
)

// keyedText is a message argument that is itself a text key with its arguments,
// said in the language asked for.
type keyedText struct {
	key  string
	args []string
}

// workflowReasons turn the engine's refusals (English, fixed) into text keys; the
// groups fill the text's {0}, {1}. A refusal not listed here is shown as the engine
// wrote it.
var workflowReasons = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`^the edges make a cycle through this node$`), "console_wf_cycle"},
	{regexp.MustCompile(`^job (\d+) does not exist$`), "console_wf_no_job"},
	{regexp.MustCompile(`^job (\d+) is in executor group (\d+), which you may not manage$`), "console_wf_group"},
	{regexp.MustCompile(`^job (\d+) is a sharding broadcast`), "console_wf_broadcast"},
	{regexp.MustCompile(`^the name must start with a letter`), "console_wf_name"},
	{regexp.MustCompile(`^the name is used twice$`), "console_wf_twice"},
	{regexp.MustCompile(`^(.+) refers to "(.*)", which is not a node this one runs after$`), "console_wf_not_parent"},
	{regexp.MustCompile(`^an edge joins the node to itself$`), "console_wf_self"},
	{regexp.MustCompile(`^edge (.+) is given twice$`), "console_wf_edge_twice"},
	{regexp.MustCompile(`^edge (.+): an output condition needs equals$`), "console_wf_equals"},
	{regexp.MustCompile(`^has no nodes$`), "console_wf_no_nodes"},
	{regexp.MustCompile(`^unknown time zone "(.*)": `), "console_unknown_zone"},
	{regexp.MustCompile(`^the parameter template has (\d+) characters, more than (\d+)$`), "console_wf_param_len"},
	{regexp.MustCompile(`^the parameter template has more than (\d+) references$`), "console_wf_param_refs"},
}

// workflowRefusal is a refused definition: Msg as the engine words it (what scripts
// and the OpenAPI see), and keyed so that the console says it in the page's language,
// naming the node first.
func workflowRefusal(ref *workflow.Error) *Error {
	var reason any = ref.Msg
	for _, r := range workflowReasons {
		if m := r.re.FindStringSubmatch(ref.Msg); m != nil {
			reason = keyedText{key: r.key, args: m[1:]}
			break
		}
	}
	if ref.Node == "" {
		return &Error{Kind: Invalid, Msg: ref.Error(), Key: "console_wf_refused", args: []any{reason}}
	}
	return &Error{Kind: Invalid, Msg: ref.Error(), Key: "console_wf_node", args: []any{ref.Node, reason}}
}
