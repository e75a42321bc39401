package config

import (
	"fmt"
	"strings"
)

// option is one --key=value argument.
type option struct {
	key, value string
	origin     string // "args --key" or "PARAMS --key", for messages
	config     bool   // the --config PATH option rather than a property
}

// parseArgs reads Spring Boot style arguments: --key=value sets a property, a bare --key
// sets it to "true", "--" ends the options, and anything else is positional. --config
// takes its path either as --config=PATH or as the next argument.
func parseArgs(args []string, from string) (opts []option, positional []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "--") {
			positional = append(positional, a)
			continue
		}
		key, value, hasValue := strings.Cut(a[2:], "=")
		if key == "" {
			return nil, nil, fmt.Errorf("%s: an argument \"--=...\" has no key", from)
		}
		if canonical(key) == "config" {
			if !hasValue {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("%s: --config needs a file path", from)
				}
				i++
				value = args[i]
			}
			if value == "" {
				return nil, nil, fmt.Errorf("%s: --config needs a file path", from)
			}
			opts = append(opts, option{key: key, value: value, origin: from + " --config", config: true})
			continue
		}
		if !hasValue {
			value = "true"
		}
		opts = append(opts, option{key: key, value: value, origin: from + " --" + key})
	}
	return opts, positional, nil
}
