package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// writePrivate writes data to path readable by its owner only (0600), also over an
// existing file of wider mode: a new file in the same directory, created 0600, is
// renamed over the target, so no reader ever sees the data with the old mode (nor a
// half-written file). The exports hold group tokens, password hashes and GLUE sources.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o600) // CreateTemp's mode already; explicit for other platforms
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
