//go:build !linux

package launch

import (
	"errors"
	"os"
)

// OpenPTY is Linux-only.
func OpenPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are opened on Linux only")
}
