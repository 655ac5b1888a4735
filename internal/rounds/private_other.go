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

// othersDir reports false: owners are not known here.
func othersDir(string, int) bool { return false }
