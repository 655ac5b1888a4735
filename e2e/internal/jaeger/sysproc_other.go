//go:build unix && !linux

package jaeger

import "syscall"

// sysProcAttr puts Jaeger in its own session and process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
