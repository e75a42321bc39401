package main

import "fmt"

// lockedError is what a second admin on the same embedded file says.
func lockedError(path, owner string) error {
	who := "another xxl-admin-go"
	if owner != "" {
		who += " (pid " + owner + ")"
	}
	return fmt.Errorf("%s already runs on this embedded database (it holds %s); stop it first, or give this one another file with --%s=FILE",
		who, path, embeddedPathKey)
}
