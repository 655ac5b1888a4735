//go:build unix

package bounded

import "syscall"

// openFlags never wait on the file: O_NONBLOCK returns at once from the
// open of a FIFO without a writer (and of a device that would wait for a
// carrier); O_NOCTTY keeps a terminal from becoming lens's.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
