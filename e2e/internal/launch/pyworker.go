package launch

import (
	_ "embed"
	"os"
	"path/filepath"
)

//go:embed pyworker.py
var pyWorker []byte

// WritePyWorker writes the Python worker into dir and returns its path.
func WritePyWorker(dir string) (string, error) {
	p := filepath.Join(dir, "pyworker.py")
	return p, os.WriteFile(p, pyWorker, 0o644)
}
