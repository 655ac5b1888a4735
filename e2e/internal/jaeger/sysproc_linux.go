//go:build linux

package jaeger

import "syscall"

// sysProcAttr puts Jaeger in its own session and process group (so terminal
// signals aimed at the test's group do not reach it) and asks the kernel to
// kill it if the test process dies without calling Stop.
//
// Pdeathsig fires when the OS thread that started the child exits. The Go
// runtime ends a thread only when a goroutine exits while locked to it with
// runtime.LockOSThread; this package never does that, and should other code
// do it, Jaeger's early exit shows up as an error from Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
