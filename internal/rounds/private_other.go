//go:build !unix

package rounds

import (
	"io/fs"
	"os"
)

// private reports false off Unix: no owner to check, so no record is kept
// (docs/tracing.md#round-links).
func private(fs.FileInfo) bool { return false }

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// ownedBy reports whether path is a directory (owners are not known here).
func ownedBy(path string, _ int) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
