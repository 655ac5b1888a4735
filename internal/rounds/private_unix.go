//go:build unix

package rounds

import (
	"io/fs"
	"os"
	"syscall"
)

// private reports whether fi is owned by the process's user and closed to
// group and others.
func private(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}

// openNoFollow opens path for reading, not through a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// othersDir reports whether path is a directory that belongs to another
// user than uid.
func othersDir(path string, uid int) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != uid
}
