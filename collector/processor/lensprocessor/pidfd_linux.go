package lensprocessor

import (
	"golang.org/x/sys/unix"
)

// openPidfd returns a pidfd of pid (Linux 5.3+): a handle on that very
// process, never on a later one that reuses its pid. -1 when it cannot.
func openPidfd(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	unix.CloseOnExec(fd)
	return fd
}

// pidfdAlive reports whether the process of fd has not been reaped:
// signal 0 checks without sending (a zombie still holds its pid).
func pidfdAlive(fd int) bool {
	return unix.PidfdSendSignal(fd, 0, nil, 0) == nil
}

func closePidfd(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
