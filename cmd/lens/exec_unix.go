//go:build unix

package main

import (
	"os"
	"syscall"
)

// forwardedSignals are the signals lens exec passes on to the command.
var forwardedSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
}

// waitStatus returns the exit status lens exec reports for a finished
// command — its exit code, or 128+N when signal N killed it — and a short
// description for the span status.
func waitStatus(ps *os.ProcessState) (status int, detail string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), "killed by signal " + ws.Signal().String()
	}
	return ps.ExitCode(), ps.String()
}
