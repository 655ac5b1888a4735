//go:build unix

package taskprolog

import (
	"os"
	"syscall"
)

// openFlags are added to every open: O_NONBLOCK so that opening a FIFO
// (or a device) never waits for its other end, O_NOCTTY so that a
// terminal never becomes the task's controlling terminal, O_NOFOLLOW so
// that a link planted in a shared log directory is not followed.
const (
	openFlags     = syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
	noFollowFlags = syscall.O_NOFOLLOW
)

// fileOwner returns the owner of fi and whether it is known.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
