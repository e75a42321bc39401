//go:build ignore

// Gen_zonenames writes zonenames.txt: the zone ids of the Go toolchain's zone
// database (lib/time/zoneinfo.zip, the data time/tzdata embeds), one a line, sorted.
//
// Usage (in scheduler/): go run gen_zonenames.go
package main

import (
	"archive/zip"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		log.Fatal(err)
	}
	z, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		if !f.FileInfo().IsDir() {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	if err := os.WriteFile("zonenames.txt", []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
}
